import RunAnywhere

/// The ``RunAnywhereError/Code`` that `body` throws, or nil when it returns normally or throws another error.
///
/// `#expect(await errorCode { try await sdk.models.delete(id: "x") } == .modelNotFound)`
public func errorCode<T>(_ body: () async throws -> T) async -> RunAnywhereError.Code? {
    do {
        _ = try await body()
        return nil
    } catch let error as RunAnywhereError {
        return error.code
    } catch {
        return nil
    }
}
