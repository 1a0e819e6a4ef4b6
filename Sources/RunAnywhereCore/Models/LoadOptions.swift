import Foundation

/// How to load a model. Every field is honoured or rejected with `.invalidConfiguration`; none is ignored.
public struct LoadOptions: Sendable, Hashable, Codable {
    /// Ordered preference; each can be `required`.
    public var backendPreferences: [BackendPreference]
    /// Accelerator policy.
    public var accelerator: AcceleratorPolicy?
    /// Context window to allocate, in tokens. A larger window costs memory whether used or not.
    public var contextLength: Int?
    /// CPU threads.
    public var threads: Int?
    /// Reload even if already resident.
    public var forceReload: Bool
    /// Pin to one framework: loading a model packaged for another fails.
    public var framework: InferenceFramework?
    /// Request GPU execution (`true` fails where no GPU is usable; `false` keeps to the CPU).
    public var useGpu: Bool?

    /// The range ``threads`` must be in on this machine: 1 to 64, or 4 threads a core on machines with more than 16 cores.
    public static var threadRange: ClosedRange<Int> {
        1...max(64, max(1, ProcessInfo.processInfo.activeProcessorCount) * 4)
    }

    /// Creates load options; every argument has a sensible default.
    public init(backendPreferences: [BackendPreference] = [], accelerator: AcceleratorPolicy? = nil,
                contextLength: Int? = nil, threads: Int? = nil, forceReload: Bool = false,
                framework: InferenceFramework? = nil, useGpu: Bool? = nil) {
        self.backendPreferences = backendPreferences
        self.accelerator = accelerator
        self.contextLength = contextLength
        self.threads = threads
        self.forceReload = forceReload
        self.framework = framework
        self.useGpu = useGpu
    }
}
