import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What the kernel says one process has used so far: CPU time and memory, from /proc.
struct ProcessUsage: Sendable {
    /// User plus system CPU seconds since it started.
    var cpuSeconds: Double
    /// Resident memory now, and the most it ever had (VmHWM), in bytes.
    var rssBytes: Int
    var peakRSSBytes: Int
    /// The anonymous part of `rssBytes`: the process's own heap and stacks. The rest is code and
    /// data mapped from the executable and the Swift libraries, clean and shared between processes.
    var anonymousRSSBytes: Int

    private static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// `nil` once the process is gone.
    static func read(pid: Int32) -> ProcessUsage? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        else { return nil }
        // Fields after the command name, which is in parentheses and may hold spaces.
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state): utime is field 14, stime field 15.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return ProcessUsage(
            cpuSeconds: (user + system) / ticksPerSecond,
            rssBytes: kilobytes("VmRSS:", in: status) * 1024,
            peakRSSBytes: kilobytes("VmHWM:", in: status) * 1024,
            anonymousRSSBytes: kilobytes("RssAnon:", in: status) * 1024)
    }

    private static func kilobytes(_ field: String, in status: String) -> Int {
        for line in status.split(separator: "\n") where line.hasPrefix(field) {
            return Int(line.dropFirst(field.count).split(whereSeparator: \.isWhitespace).first ?? "") ?? 0
        }
        return 0
    }
}
