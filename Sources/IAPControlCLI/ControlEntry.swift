/// `iapctl`'s main: an operator's command, it runs on Swift's own pool and stops at once on a signal.
package enum ControlEntry {
    package static func main() async { await ControlCommand.main() }
}
