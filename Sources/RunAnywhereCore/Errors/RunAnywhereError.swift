import Foundation

/// The one error type of the SDK.
///
/// Every failure the SDK reports is a `RunAnywhereError` with a ``code`` you can switch on
/// and a ``message`` a person can act on: which model, what was needed, what was available.
/// Cancellation of the calling task surfaces as ``Code/cancelled``.
///
/// ```swift
/// do {
///     _ = try await RunAnywhere.models.load(id: "qwen3-0.6b")
/// } catch let error as RunAnywhereError where error.code == .insufficientMemory {
///     try await RunAnywhere.models.unloadAll()
/// }
/// ```
public struct RunAnywhereError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// What kind of failure this is.
    public enum Code: String, Sendable, Hashable, Codable, CaseIterable {
        /// The id is not in the registry.
        case modelNotFound
        /// Not enough disk for the download.
        case insufficientStorage
        /// The model will not fit in RAM.
        case insufficientMemory
        /// A download needs a connection and there is none (no route, DNS failure).
        case networkUnavailable
        /// The downloaded bytes do not have the expected SHA-256 or size.
        case checksumMismatch
        /// The download failed for a reason other than the network being unavailable.
        case downloadFailed
        /// The server wants credentials (a Hugging Face token for a gated or private repo).
        case authenticationRequired
        /// An archive could not be unpacked, or holds an entry that escapes the model folder.
        case extractionFailed
        /// A model file is malformed, truncated, or of a kind this SDK cannot read.
        case invalidModelFormat
        /// No backend can serve this model with the requested preferences.
        case backendUnavailable
        /// The operation needs a loaded model and none is resident.
        case modelNotLoaded
        /// An argument or configuration value is invalid (a bad id, URL, or option combination).
        case invalidConfiguration
        /// The operation was cancelled.
        case cancelled
        /// A file-system operation failed (permissions, I/O error).
        case storageFailure
        /// Text generation failed.
        case generationFailed
        /// The model is known but its files are not on disk (download it first).
        case modelNotDownloaded
    }

    /// What kind of failure this is.
    public let code: Code
    /// A sentence a person can act on.
    public let message: String
    /// The model concerned, when there is one.
    public let modelId: String?

    /// Creates an error.
    public init(_ code: Code, _ message: String, modelId: String? = nil) {
        self.code = code
        self.message = message
        self.modelId = modelId
    }

    public var description: String { "\(code.rawValue): \(message)" }
    public var errorDescription: String? { message }
}

extension RunAnywhereError.Code {
    /// Matches any error by code, so `catch RunAnywhereError.Code.modelNotFound` works in a `catch` clause.
    public static func ~= (code: Self, error: any Error) -> Bool {
        (error as? RunAnywhereError)?.code == code
    }
}

extension RunAnywhereError {
    /// The id is not in the registry.
    public static func modelNotFound(_ id: String) -> RunAnywhereError {
        RunAnywhereError(.modelNotFound, "No model with id '\(id)' is in the registry. Run `runanywhere models list` to see the known ids, or register it first.", modelId: id)
    }

    /// Not enough disk.
    public static func insufficientStorage(needed: Int64, available: Int64, path: String, modelId: String? = nil) -> RunAnywhereError {
        RunAnywhereError(.insufficientStorage,
            "Not enough disk: need \(ByteFormatter.string(needed)), \(ByteFormatter.string(available)) free on \(path). Free some space or set RUNANYWHERE_HOME to a larger volume.",
            modelId: modelId)
    }

    /// Not enough memory.
    public static func insufficientMemory(needed: Int64, available: Int64, modelId: String? = nil) -> RunAnywhereError {
        RunAnywhereError(.insufficientMemory,
            "Model\(modelId.map { " '\($0)'" } ?? "") needs \(ByteFormatter.string(needed)) of memory but only \(ByteFormatter.string(available)) is available. Unload other models or use a smaller contextLength.",
            modelId: modelId)
    }

    /// The task was cancelled.
    public static func cancelled(_ what: String = "The operation", modelId: String? = nil) -> RunAnywhereError {
        RunAnywhereError(.cancelled, "\(what) was cancelled.", modelId: modelId)
    }
}
