import Foundation
import RunAnywhereSherpa
import RunAnywhereTestSupport

extension SpeechTestData {
    /// The backend as the tests use it: the checkout's library, the test data's VAD model.
    static func backend() -> SherpaOnnxBackend { SherpaOnnxBackend(vadModelPath: vadModel?.path) }
}
