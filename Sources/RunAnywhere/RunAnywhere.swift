import Foundation

/// The RunAnywhere SDK namespace.
public enum RunAnywhere {}
