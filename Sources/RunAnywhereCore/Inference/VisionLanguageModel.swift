import Foundation

/// An image for a vision-language model: a file, encoded bytes (PNG or JPEG), or raw RGB pixels.
///
/// ```swift
/// let photo = VlmImage(contentsOf: URL(fileURLWithPath: "photo.jpg"))
/// let result = try await RunAnywhere.vlm.generate(prompt: "What is in this picture?", images: [photo],
///                                                 options: LlmOptions(model: "smolvlm-256m"))
/// ```
public struct VlmImage: Sendable, Hashable {
    /// Where the pixels come from.
    public enum Source: Sendable, Hashable {
        /// A PNG or JPEG file, read when the model runs.
        case file(URL)
        /// PNG or JPEG bytes.
        case encoded(Data)
        /// `width × height` pixels of three bytes (R, G, B), rows top to bottom.
        case pixels(width: Int, height: Int, rgb: [UInt8])
    }

    /// Where the pixels come from.
    public let source: Source

    /// An image file (PNG or JPEG).
    public init(contentsOf url: URL) { source = .file(url) }
    /// PNG or JPEG bytes.
    public init(encoded data: Data) { source = .encoded(data) }
    /// Raw RGB pixels (`rgb.count` must be `width × height × 3`; checked when the model runs).
    public init(width: Int, height: Int, rgb: [UInt8]) { source = .pixels(width: width, height: height, rgb: rgb) }
}

/// A loaded model that answers prompts about images (a language model with a vision projector).
public protocol VisionLanguageModel: BackendModel {
    /// Generates text for a prompt about `images` (placed before the prompt text, in order). Blocking; called
    /// serially. An empty `images` is an ordinary text prompt.
    func generate(_ request: BackendGenerationRequest, images: [VlmImage], onText: (String) -> Void,
                  shouldContinue: () -> Bool) throws -> BackendGenerationStats
}
