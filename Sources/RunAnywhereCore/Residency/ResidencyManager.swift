import Foundation

/// What is loaded in memory, and the rules for loading and unloading.
///
/// Concurrent loads of one model share one load; a failed load leaves the previous state intact;
/// a model that is generating is never evicted (explicit unloads take effect when its call ends,
/// because the call holds the last reference).
actor ResidencyManager {
    struct Resident {
        var info: LoadedModel
        let handle: any BackendModel
        let key: LoadKey
        let lock: AsyncSerialLock
        var activeCalls: Int
    }

    /// What makes two loads of one model the same load.
    struct LoadKey: Hashable {
        var backend: BackendID
        var contextLength: Int
        var threads: Int
    }

    let backends: BackendSet
    private var residents: [String: Resident] = [:]
    private var loading: [String: (key: LoadKey, task: Task<LoadedModel, any Error>)] = [:]
    private let memoryBudget: Int64?
    private let maxResident: Int?
    /// When requests may go to a remote endpoint instead of the device.
    let routing: RemoteRouting
    /// Where available memory comes from (replaceable in tests).
    private let availableMemory: @Sendable () -> Int64?

    init(backends: BackendSet, memoryBudget: Int64?, maxResident: Int?, routing: RemoteRouting = .never,
         availableMemory: @escaping @Sendable () -> Int64? = SystemMemory.loadableBytes) {
        self.backends = backends
        self.routing = routing
        self.memoryBudget = memoryBudget
        self.maxResident = maxResident
        self.availableMemory = availableMemory
    }

    func register(_ backend: any InferenceBackend) {
        backends.register(backend)
    }

    /// Asks every backend to give freed memory back to the system (after a model's last reference went).
    private func returnFreedMemory() {
        for backend in backends.ordered { backend.releaseFreedMemory() }
    }

    // MARK: Resolving options

    struct Plan {
        let backend: any InferenceBackend
        let note: String?
        let key: LoadKey
        /// The model as opened for this load, with its memory estimate.
        let prepared: any PreparedLoad
        var estimate: BackendMemoryEstimate { prepared.estimate }
    }

    /// Checks every option and picks the backend, context and threads, or throws naming the problem.
    func plan(_ model: ModelInfo, _ options: LoadOptions) throws -> Plan {
        if let pinned = options.framework, pinned != model.framework {
            throw RunAnywhereError(.invalidConfiguration, "Model '\(model.id)' is packaged for \(model.framework.rawValue), but LoadOptions.framework pins \(pinned.rawValue).", modelId: model.id)
        }
        var notes: [String] = []
        // Accelerators: this build runs on the CPU only.
        if options.accelerator == .requireGpu {
            if options.useGpu == false {
                throw RunAnywhereError(.invalidConfiguration, "LoadOptions asks for accelerator .requireGpu and useGpu: false at once.", modelId: model.id)
            }
            throw RunAnywhereError(.backendUnavailable, "No GPU backend is available on this machine, and the accelerator policy .requireGpu does not allow running '\(model.id)' on the CPU. Use .preferGpu or .automatic to fall back.", modelId: model.id)
        }
        if options.useGpu == true {
            if options.accelerator == .cpuOnly {
                throw RunAnywhereError(.invalidConfiguration, "LoadOptions asks for useGpu: true with accelerator .cpuOnly.", modelId: model.id)
            }
            notes.append("GPU requested but none is usable here; running on the CPU")
        } else if options.accelerator == .preferGpu {
            notes.append("no GPU is usable here; running on the CPU")
        }
        if let t = options.threads, !LoadOptions.threadRange.contains(t) {
            throw RunAnywhereError(.invalidConfiguration, "LoadOptions.threads must be between 1 and \(LoadOptions.threadRange.upperBound) (got \(t)).", modelId: model.id)
        }
        if let c = options.contextLength, c < 16 {
            throw RunAnywhereError(.invalidConfiguration, "LoadOptions.contextLength must be at least 16 tokens (got \(c)).", modelId: model.id)
        }

        // A backend may find only when it opens the files that it cannot run them (a tensor type its kernels lack):
        // unless a required preference named it, the next backend that can serve the model gets it, and the note says why.
        var refused: [BackendID: String] = [:]
        var choice: Choice, prepared: any PreparedLoad
        while true {
            choice = try chooseBackend(model, options, refused: refused)
            if choice.backend.runsOnDevice, !model.isDownloaded || model.primaryFilePath == nil {
                throw RunAnywhereError(.modelNotDownloaded, "Model '\(model.id)' is not on disk. Download it first with models.download(id:) or `runanywhere models pull \(model.id)`.", modelId: model.id)
            }
            do {
                prepared = try choice.backend.prepare(model, contextLength: options.contextLength)
                break
            } catch let error as RunAnywhereError where error.code == .backendUnavailable && !choice.required && refused[choice.backend.id] == nil {
                refused[choice.backend.id] = error.message.hasSuffix(".") ? String(error.message.dropLast()) : error.message
            }
        }
        notes += choice.notes
        let backend = choice.backend
        let estimate = prepared.estimate
        if let c = options.contextLength, let maxC = estimate.maximumContextLength, c > maxC {
            throw RunAnywhereError(.invalidConfiguration, "LoadOptions.contextLength \(c) exceeds the maximum of '\(model.id)' (\(maxC) tokens).", modelId: model.id)
        }
        let threads = backend.runsOnDevice ? options.threads ?? min(max(1, ProcessInfo.processInfo.activeProcessorCount), 8) : 0
        let key = LoadKey(backend: backend.id, contextLength: estimate.contextLength, threads: threads)
        return Plan(backend: backend, note: notes.isEmpty ? nil : notes.joined(separator: "; "), key: key, prepared: prepared)
    }

    // MARK: Loading

    /// Loads (or returns the already-resident) model.
    func load(_ model: ModelInfo, options: LoadOptions, evictIfNeeded: Bool = false) async throws -> LoadedModel {
        if !model.isDownloaded || model.primaryFilePath == nil, !mayServeRemotely(model, options) {
            throw RunAnywhereError(.modelNotDownloaded, "Model '\(model.id)' is not on disk. Download it first with models.download(id:) or `runanywhere models pull \(model.id)`.", modelId: model.id)
        }
        var plan = try plan(model, options)
        if let ready = try await alreadyLoaded(model.id, plan.key, options) { return ready }
        do {
            try makeRoom(for: model.id, needed: plan.estimate.totalBytes, evict: evictIfNeeded)
        } catch let error as RunAnywhereError where error.code == .insufficientMemory {
            // The routing may send what does not fit to a remote endpoint, saying so.
            guard let rerouted = try reroute(plan, model, options, why: error.message) else { throw error }
            plan = rerouted
            if let ready = try await alreadyLoaded(model.id, plan.key, options) { return ready }
            try makeRoom(for: model.id, needed: plan.estimate.totalBytes, evict: evictIfNeeded)
        }
        let estimate = plan.estimate
        let backend = plan.backend
        let prepared = plan.prepared
        let request = BackendLoadRequest(model: model, contextLength: plan.key.contextLength, threads: plan.key.threads)
        let task = Task<LoadedModel, any Error> {
            let start = monotonicSeconds()
            let handle = try await BlockingWork.run(name: "runanywhere-load") { _ in try prepared.load(request) }
            let seconds = monotonicSeconds() - start
            let info = LoadedModel(id: model.id, category: model.category, backend: backend.id, backendNote: plan.note,
                                   contextLength: plan.key.contextLength, threads: plan.key.threads,
                                   estimatedMemoryBytes: estimate.totalBytes, memoryBytes: handle.memoryBytes,
                                   loadSeconds: seconds, loadedAt: Date(), lastUsedAt: Date())
            self.finishLoad(model.id, key: plan.key, info: info, handle: handle)
            return info
        }
        loading[model.id] = (plan.key, task)
        do {
            return try await task.value
        } catch {
            if loading[model.id]?.key == plan.key { loading[model.id] = nil }
            throw error
        }
    }

    /// The resident model (or the load under way) of `id` with this key, unless a reload is forced.
    private func alreadyLoaded(_ id: String, _ key: LoadKey, _ options: LoadOptions) async throws -> LoadedModel? {
        if !options.forceReload, var resident = residents[id], resident.key == key {
            resident.info.lastUsedAt = Date()
            residents[id] = resident
            return resident.info
        }
        if !options.forceReload, let pending = loading[id], pending.key == key {
            return try await pending.task.value
        }
        return nil
    }

    private func finishLoad(_ id: String, key: LoadKey, info: LoadedModel, handle: any BackendModel) {
        if loading[id]?.key == key { loading[id] = nil }
        // Replaces an older load of the same model; that one is freed when its last call ends.
        residents[id] = Resident(info: info, handle: handle, key: key, lock: residents[id]?.lock ?? AsyncSerialLock(), activeCalls: residents[id]?.activeCalls ?? 0)
    }

    /// Ensures `needed` bytes fit, evicting idle least-recently-used models when `evict` (or a residency limit) allows.
    private func makeRoom(for id: String, needed: Int64, evict: Bool) throws {
        func residentBytes(excluding: String?) -> Int64 {
            residents.filter { $0.key != excluding }.reduce(0) { $0 + $1.value.info.memoryBytes }
        }
        func available() -> Int64 {
            var room = Int64.max
            if let sys = availableMemory() {
                // A model being replaced gives its memory back.
                room = sys + (residents[id]?.info.memoryBytes ?? 0)
            }
            if let budget = memoryBudget { room = min(room, budget - residentBytes(excluding: id)) }
            return room
        }
        func evictOne() -> Bool {
            guard let victim = leastRecentlyUsedIdle(excluding: id) else { return false }
            unload(victim)
            return true
        }
        if let maxResident, residents[id] == nil {
            while residents.count >= maxResident, evictOne() {}
        }
        while needed > available() {
            if (evict || memoryBudget != nil || maxResident != nil), evictOne() { continue }
            throw RunAnywhereError.insufficientMemory(needed: needed, available: max(0, available()), modelId: id)
        }
    }

    // MARK: Unloading and state

    /// Unloads a model; idempotent. Memory is freed at once, or when a running call on it ends.
    func unload(_ id: String) {
        loading[id]?.task.cancel()
        loading[id] = nil
        let idle: Bool
        do {
            // The handle is released at the end of this scope, before the heap is trimmed below.
            guard let removed = residents.removeValue(forKey: id) else { return }
            idle = removed.activeCalls == 0
        }
        // Freed now unless a call still holds it; then the call's end releases it (see endLease).
        if idle { returnFreedMemory() }
    }

    /// Unloads every model, or those of one category.
    func unloadAll(category: ModelCategory?) {
        for (id, r) in residents where category == nil || r.info.category == category {
            unload(id)
        }
        if category == nil {
            for id in loading.keys { unload(id) }
        }
    }

    /// Resident models, most recently used first.
    func loaded() -> [LoadedModel] {
        residents.values.map(\.info).sorted { $0.lastUsedAt > $1.lastUsedAt }
    }

    func isResident(_ id: String) -> Bool { residents[id] != nil }

    /// The resident entry of `id` (its info and how many calls hold it), if resident.
    func residentState(_ id: String) -> (info: LoadedModel, activeCalls: Int)? {
        residents[id].map { ($0.info, $0.activeCalls) }
    }

    /// The most recently used resident model of a category.
    func mostRecent(category: ModelCategory) -> String? {
        residents.values.filter { $0.info.category == category }.max { $0.info.lastUsedAt < $1.info.lastUsedAt }?.info.id
    }

    // MARK: Leases for calls

    /// Runs `body` with the resident model `id` held for one call: calls on one model run one at a time, the model
    /// is not evicted while the call runs, and an unload during the call frees it when the call ends.
    /// - Throws: `.modelNotLoaded` when the model is not resident; what `body` throws.
    nonisolated func withLease<T>(_ id: String, _ body: (any BackendModel, LoadedModel) async throws -> T) async throws -> T {
        guard let lease = await beginLease(id) else {
            throw RunAnywhereError(.modelNotLoaded, "Model '\(id)' was unloaded before the call could start.", modelId: id)
        }
        await lease.lock.acquire()
        let outcome = await Result { try await body(lease.handle, lease.info) }
        // Hand the model back before reporting, so an unload right after this call frees it at once.
        await lease.lock.release()
        await endLease(id, handle: lease.handle)
        return try outcome.get()
    }

    /// Holds a resident model for one call: it is not evicted until ``endLease(_:handle:)``.
    private func beginLease(_ id: String) -> (handle: any BackendModel, lock: AsyncSerialLock, info: LoadedModel)? {
        guard var r = residents[id] else { return nil }
        r.activeCalls += 1
        r.info.lastUsedAt = Date()
        residents[id] = r
        return (r.handle, r.lock, r.info)
    }

    private func endLease(_ id: String, handle: any BackendModel) {
        guard var r = residents[id], r.handle === handle else {
            // The model was unloaded or replaced during the call, which held the last reference.
            returnFreedMemory()
            return
        }
        r.activeCalls = max(0, r.activeCalls - 1)
        r.info.lastUsedAt = Date()
        residents[id] = r
        enforceResidentLimit(keeping: id)
    }

    /// A load may exceed `maxResidentModels` while a model it would evict is generating; once that call ends,
    /// the least recently used idle models go.
    private func enforceResidentLimit(keeping id: String) {
        guard let maxResident else { return }
        while residents.count > maxResident, let victim = leastRecentlyUsedIdle(excluding: id) {
            unload(victim)
        }
    }

    /// The eviction victim: the least recently used resident model that no call is using, other than `id`.
    private func leastRecentlyUsedIdle(excluding id: String) -> String? {
        residents.filter { $0.key != id && $0.value.activeCalls == 0 }
            .min { $0.value.info.lastUsedAt < $1.value.info.lastUsedAt }?.key
    }
}
