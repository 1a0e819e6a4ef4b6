import Foundation

/// `RunAnywhere.vlm`: answers about images with vision-language models (`.vision` models such as `smolvlm-256m`:
/// a language model and its vision projector, downloaded and loaded together).
///
/// ```swift
/// let answer = try await RunAnywhere.vlm.generate(prompt: "What is in this picture?",
///                                                 images: [VlmImage(contentsOf: photoURL)],
///                                                 options: LlmOptions(model: "smolvlm-256m", maxTokens: 64))
/// print(answer.text)
/// ```
public final class VLMService: Sendable {
    let llm: LLMService

    init(llm: LLMService) {
        self.llm = llm
    }

    /// Generates text about images, loading (and first downloading) `options.model` when needed.
    /// Without images it is an ordinary text prompt to the vision model's language model.
    /// - Throws: as ``LLMService/generate(prompt:options:)``; `.invalidConfiguration` when the model cannot take
    ///   images or an image cannot be read (`.invalidModelFormat` for an undecodable image).
    public func generate(prompt: String, images: [VlmImage], options: LlmOptions = LlmOptions()) async throws -> GenerationResult {
        try await llm.collect(llm.generateStream(prompt: prompt, images: images, options: options, streamsText: false),
                              modelId: options.model)
    }

    /// Like ``generate(prompt:images:options:)``, streaming text as it is produced and ending with `.completed`.
    public func generateStream(prompt: String, images: [VlmImage], options: LlmOptions = LlmOptions())
        -> AsyncThrowingStream<GenerationEvent, any Error> {
        llm.generateStream(prompt: prompt, images: images, options: options)
    }
}
