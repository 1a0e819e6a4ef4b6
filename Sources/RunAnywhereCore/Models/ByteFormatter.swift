import Foundation

/// Human-readable byte counts (decimal units, like download tools show them).
public enum ByteFormatter {
    /// "639 MB", "1.2 GB", "512 B".
    public static func string(_ bytes: Int64) -> String {
        let b = Double(bytes)
        let units: [(Double, String)] = [(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")]
        for (scale, unit) in units where abs(b) >= scale {
            let v = b / scale
            return v >= 100 ? String(format: "%.0f %@", v, unit) : String(format: "%.1f %@", v, unit)
        }
        return "\(bytes) B"
    }
}
