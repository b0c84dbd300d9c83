import Glibc

/// Every connection (a waiting long poll and an open event stream included) holds a file descriptor, so the
/// process's open-file limit (`RLIMIT_NOFILE`) must reach the configured connection limit. At start the soft limit
/// is raised to what is wanted; when the hard limit is lower, it is raised too, up to the kernel's ceiling
/// (`fs.nr_open`), which only a process with `CAP_SYS_RESOURCE` (root) may do. A process that cannot is told
/// exactly what to set. Debian's default hard limit (systemd's 524,288, a login shell's often far less) is the
/// first thing 100,000 streams meet.
public enum FileDescriptorLimit {
    /// An open-file limit: the soft one in force and the hard one it may be raised to.
    public struct Limits: Equatable, Sendable, CustomStringConvertible {
        public var soft: UInt64
        public var hard: UInt64

        public init(soft: UInt64, hard: UInt64) {
            self.soft = soft
            self.hard = hard
        }

        public var description: String { "\(soft) (hard \(hard))" }
    }

    /// What `raise` found and left: the limits before and after, and, when short of what was wanted, what an
    /// operator must set.
    public struct Outcome: Equatable, Sendable {
        public var before: Limits
        public var after: Limits
        public var wanted: UInt64
        /// `nil` when the soft limit reaches `wanted`.
        public var advice: String?
    }

    /// The limits to ask for: unchanged when the soft one already reaches `wanted`; else the soft one at `wanted`,
    /// the hard one raised to it when lower, both capped by `ceiling` (`fs.nr_open`, above which no process may go).
    public static func target(current: Limits, wanted: UInt64, ceiling: UInt64) -> Limits {
        guard current.soft < wanted else { return current }
        let hard = current.hard >= wanted ? current.hard : max(current.hard, min(wanted, ceiling))
        return Limits(soft: min(wanted, hard), hard: hard)
    }

    /// What an operator must set for the soft limit to reach `wanted`, given the limits `got`; `nil` when it does.
    public static func advice(wanted: UInt64, got: Limits, ceiling: UInt64) -> String? {
        guard got.soft < wanted else { return nil }
        var text =
            "set LimitNOFILE=\(wanted) in the service's systemd unit (or `ulimit -n \(wanted)` in the shell that "
            + "starts quire; Docker: --ulimit nofile=\(wanted):\(wanted))"
        if wanted > ceiling {
            text += ", after raising the kernel's ceiling: sysctl -w fs.nr_open=\(wanted) (now \(ceiling))"
        }
        return text
    }

    /// Raises this process's open-file limit toward `wanted` (see the type), from the limits read now.
    @discardableResult
    public static func raise(toAtLeast count: Int) -> Outcome {
        let needed = UInt64(max(count, 0))
        let ceiling = kernelCeiling()
        let before = current()
        let asked = Self.target(current: before, wanted: needed, ceiling: ceiling)
        if asked != before && !set(asked) && asked.hard > before.hard {
            // Not privileged to raise the hard limit (EPERM): as far as the hard limit lets.
            _ = set(Limits(soft: min(needed, before.hard), hard: before.hard))
        }
        let after = current()
        return Outcome(
            before: before, after: after, wanted: needed,
            advice: advice(wanted: needed, got: after, ceiling: ceiling))
    }

    /// The process's open-file limit now.
    public static func current() -> Limits {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return Limits(soft: 0, hard: 0) }
        return Limits(soft: UInt64(limit.rlim_cur), hard: UInt64(limit.rlim_max))
    }

    /// `fs.nr_open`, the most descriptors the kernel lets any process have (1,048,576 unless configured).
    public static func kernelCeiling() -> UInt64 {
        let fallback: UInt64 = 1 << 20
        let file = open("/proc/sys/fs/nr_open", O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { return fallback }
        defer { close(file) }
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = bytes.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
        guard count > 0 else { return fallback }
        let text = String(decoding: bytes[..<count], as: UTF8.self)
        return UInt64(text.filter(\.isNumber)) ?? fallback
    }

    private static func set(_ limits: Limits) -> Bool {
        var limit = rlimit(rlim_cur: rlim_t(limits.soft), rlim_max: rlim_t(limits.hard))
        return setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0
    }
}
