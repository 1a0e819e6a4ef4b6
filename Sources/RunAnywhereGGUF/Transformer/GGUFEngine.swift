import CKernels

/// Namespace of the native GGUF engine.
public enum GGUFEngine {}

extension GGUFEngine {
    /// Gives freed heap memory back to the operating system. Call after releasing a model and its
    /// context, so the process's resident size drops back; a no-op where the allocator cannot do it.
    @discardableResult
    public static func releaseFreedMemory() -> Bool {
        ra_release_free_memory() == 1
    }
}
