#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM or SIGINT before the service group has taken them over (it then stops gracefully)
/// ends the process with exit 0: it has taken no job and accepted no request yet, so there is
/// nothing to finish or hand back, and an orchestrator sees a clean stop rather than a kill.
enum EarlyStop {
    static func exitCleanly() {
        for number in [SIGTERM, SIGINT] {
            signal(number) { _ in _exit(0) }
        }
    }
}
