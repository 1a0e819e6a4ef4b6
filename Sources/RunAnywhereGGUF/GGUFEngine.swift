import CKernels

/// Namespace of the native GGUF engine.
public enum GGUFEngine {}
