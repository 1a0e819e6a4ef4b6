import Foundation
import RunAnywhere

/// `runanywhere models list --discover`: GGUF files other tools keep on this machine.
enum ModelsDiscoverListing {
    static let help = """
          --discover      list GGUF files in the Hugging Face cache ($HF_HUB_CACHE, $HF_HOME/hub,
                          $XDG_CACHE_HOME/huggingface/hub or ~/.cache/huggingface/hub) and Ollama's store
                          ($OLLAMA_MODELS or ~/.ollama/models) instead; import one with
                          `runanywhere models import PATH` (no network request, nothing changed)
        """

    static func run(json: Bool) async throws -> Int32 {
        let discovery = await RunAnywhere.models.discoverLocal()
        if json {
            try Output.json(discovery)
            return ExitCode.ok
        }
        for store in discovery.searched where !store.exists {
            Output.stderr("note: no \(label(store.source)) at \(store.path.path)")
        }
        for skipped in discovery.skipped {
            Output.stderr("skipped \(skipped.path.path): \(skipped.reason)")
        }
        guard !discovery.models.isEmpty else {
            Output.out("No GGUF model files found in the Hugging Face cache or Ollama's store.")
            return ExitCode.ok
        }
        let rows = discovery.models.map { m in
            [m.source == .huggingFace ? "huggingface" : "ollama", m.importedAs ?? m.suggestedId, ModelText.size(m.sizeBytes),
             m.importedAs == nil ? "no" : "yes", m.catalogModelId.map { "catalog " + $0 } ?? "-", m.name, m.referencePath.path]
        }
        Output.out(Output.table(["SOURCE", "ID", "SIZE", "IMPORTED", "MATCHES", "NAME", "PATH"], rows))
        if discovery.models.contains(where: { $0.importedAs == nil }) {
            Output.out("\nImport one with `runanywhere models import PATH [--id ID]` (hard link, else symbolic link; nothing is downloaded).")
        }
        return ExitCode.ok
    }

    private static func label(_ source: DiscoveredModel.Source) -> String {
        source == .huggingFace ? "Hugging Face cache" : "Ollama store"
    }
}
