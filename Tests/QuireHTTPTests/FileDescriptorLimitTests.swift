import Foundation
import Glibc
import QuireHTTP
import Testing

/// The open-file limit read and raised at start: what is asked of the kernel, what an operator is told when the
/// process may not raise it, and the real limit of this process raised.
@Suite("open-file limit")
struct FileDescriptorLimitTests {
    typealias Limits = FileDescriptorLimit.Limits

    @Test("the soft limit is raised to what is wanted, the hard one too when lower, never past fs.nr_open")
    func target() {
        let ceiling: UInt64 = 1_048_576
        // Enough already: unchanged, even above what is wanted.
        #expect(
            FileDescriptorLimit.target(
                current: Limits(soft: 200_000, hard: 300_000), wanted: 100_256,
                ceiling: ceiling) == Limits(soft: 200_000, hard: 300_000))
        // Within the hard limit: the soft one alone.
        #expect(
            FileDescriptorLimit.target(
                current: Limits(soft: 1_024, hard: 524_288), wanted: 100_256,
                ceiling: ceiling) == Limits(soft: 100_256, hard: 524_288))
        // Above it (this machine's 20,000): both, to what is wanted.
        #expect(
            FileDescriptorLimit.target(
                current: Limits(soft: 20_000, hard: 20_000), wanted: 100_256,
                ceiling: ceiling) == Limits(soft: 100_256, hard: 100_256))
        // Above the kernel's ceiling: up to it.
        #expect(
            FileDescriptorLimit.target(
                current: Limits(soft: 20_000, hard: 20_000), wanted: 2_000_256,
                ceiling: ceiling) == Limits(soft: ceiling, hard: ceiling))
        // A hard limit above the ceiling (raised before the ceiling was lowered) is not lowered.
        #expect(
            FileDescriptorLimit.target(
                current: Limits(soft: 1_024, hard: 2_000_000), wanted: 100_256,
                ceiling: ceiling) == Limits(soft: 100_256, hard: 2_000_000))
    }

    @Test("short of what is wanted, the advice names the number to set, and fs.nr_open when that is lower")
    func advice() throws {
        #expect(
            FileDescriptorLimit.advice(
                wanted: 100_256, got: Limits(soft: 100_256, hard: 100_256),
                ceiling: 1_048_576) == nil)
        let short = try #require(
            FileDescriptorLimit.advice(wanted: 100_256, got: Limits(soft: 20_000, hard: 20_000), ceiling: 1_048_576))
        #expect(short.contains("LimitNOFILE=100256") && short.contains("ulimit -n 100256"))
        #expect(!short.contains("nr_open"))
        let ceiling = try #require(
            FileDescriptorLimit.advice(wanted: 2_000_256, got: Limits(soft: 20_000, hard: 20_000), ceiling: 1_048_576))
        #expect(ceiling.contains("LimitNOFILE=2000256") && ceiling.contains("fs.nr_open=2000256"))
        #expect(ceiling.contains("now 1048576"))
    }

    /// Whether this process has CAP_SYS_RESOURCE (bit 24 of its effective capabilities), which raising a hard
    /// limit takes (root in a container may lack it).
    static func mayRaiseHardLimit() -> Bool {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
            let bits = UInt64(line.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return false }
        return bits & (1 << 24) != 0
    }

    @Test("this process's limit, read and raised: past its hard limit where privileged, else as far as that goes")
    func raise() {
        let ceiling = FileDescriptorLimit.kernelCeiling()
        var nrOpen = [UInt8](repeating: 0, count: 32)
        let file = open("/proc/sys/fs/nr_open", O_RDONLY)
        let count = nrOpen.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
        close(file)
        #expect(ceiling == UInt64(String(decoding: nrOpen[..<max(count, 0)], as: UTF8.self).filter(\.isNumber)))
        let before = FileDescriptorLimit.current()
        #expect(before.soft > 0 && before.soft <= before.hard)
        // Within the hard limit (the soft one lowered by one first: it may be at the hard one already): raised,
        // nothing to advise.
        var lowered = rlimit(rlim_cur: rlim_t(before.soft - 1), rlim_max: rlim_t(before.hard))
        #expect(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &lowered) == 0)
        let within = FileDescriptorLimit.raise(toAtLeast: Int(before.soft))
        #expect(within.before == Limits(soft: before.soft - 1, hard: before.hard))
        #expect(within.after == before && within.advice == nil)
        #expect(FileDescriptorLimit.current() == before)
        // Past the hard limit (and below the ceiling): root (CAP_SYS_RESOURCE) raises the hard limit too; a process
        // without it stays at its hard limit and is told what to set.
        guard before.hard < ceiling else { return }
        let wanted = Int(min(before.hard + 1_000, ceiling))
        let past = FileDescriptorLimit.raise(toAtLeast: wanted)
        if Self.mayRaiseHardLimit() {
            #expect(past.after.soft == UInt64(wanted) && past.after.hard == UInt64(wanted) && past.advice == nil)
        } else {
            #expect(past.after.soft == before.hard && past.after.hard == before.hard)
            #expect(past.advice?.contains("LimitNOFILE=\(wanted)") == true)
        }
        #expect(FileDescriptorLimit.current() == past.after)
    }
}
