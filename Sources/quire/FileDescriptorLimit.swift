import Glibc
import Logging

/// Every connection (a waiting long poll included) holds a file descriptor: the soft limit is raised
/// toward the hard one so that the configured connection limit can be reached.
enum FileDescriptorLimit {
    static func raise(toAtLeast wanted: Int, logger: Logger) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < rlim_t(wanted) else { return }
        let target = min(rlim_t(wanted), limit.rlim_max)
        limit.rlim_cur = target
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) != 0 || target < rlim_t(wanted) {
            logger.warning(
                "open-file limit below the connection limit",
                metadata: ["limit": "\(target)", "wanted": "\(wanted)"])
        }
    }
}
