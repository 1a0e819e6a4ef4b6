import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Plain-words descriptions of Foundation errors, for messages a person reads (never a domain and a number).
enum ErrorWords {
    /// What went wrong in a JSON document: where (the field path, or the line) and what.
    static func describe(_ error: any Error) -> String {
        if let decoding = error as? DecodingError { return describe(decoding) }
        let ns = error as NSError
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if ns.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(ns.code))) }
        if let cocoa = error as? CocoaError {
            switch cocoa.code {
            case .fileNoSuchFile, .fileReadNoSuchFile: return "no such file or folder"
            case .fileWriteNoPermission, .fileReadNoPermission: return "permission denied"
            case .fileWriteOutOfSpace: return "the disk is full"
            case .fileWriteFileExists: return "a file is in the way"
            case .fileWriteVolumeReadOnly: return "the volume is read-only"
            default: break
            }
        }
        return ns.localizedDescription
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let p = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return p.isEmpty ? "the document" : String(p.drop(while: { $0 == "." }))
        }
        switch error {
        case .dataCorrupted(let c):
            // JSONSerialization's own words ("Unexpected character 'x' around line 3, column 1.") are clear.
            let underlying = (c.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
            return c.codingPath.isEmpty ? "it is not valid JSON\(underlying.map { " (\($0))" } ?? "")" : "\(path(c)): \(c.debugDescription)"
        case .keyNotFound(let key, let c):
            return "\(c.codingPath.isEmpty ? "" : path(c) + ": ")the field '\(key.stringValue)' is missing"
        case .typeMismatch(let type, let c):
            return "\(path(c)): expected \(readable(type))"
        case .valueNotFound(let type, let c):
            return "\(path(c)): expected \(readable(type)), found null"
        @unknown default:
            return "\(error)"
        }
    }

    private static func readable(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Int.Type, is Int64.Type: return "a whole number"
        case is Double.Type: return "a number"
        case is Bool.Type: return "true or false"
        default:
            let name = "\(type)"
            return name.hasPrefix("Array") ? "a list" : name.hasPrefix("Dictionary") ? "an object" : "an object (\(name))"
        }
    }

    /// Why a folder cannot be created or written: the first ancestor that is not a folder, or is not writable.
    static func folderProblem(_ url: URL) -> String? {
        var probe = url.standardizedFileURL.path
        while !probe.isEmpty {
            var st = stat()
            if stat(probe, &st) == 0 {
                if (st.st_mode & S_IFMT) != S_IFDIR { return "\(probe) is a file, not a folder" }
                if access(probe, W_OK | X_OK) != 0 { return "\(probe) is not writable (\(String(cString: strerror(errno))))" }
                return nil
            }
            let parent = (probe as NSString).deletingLastPathComponent
            if parent == probe { break }
            probe = parent
        }
        return nil
    }
}
