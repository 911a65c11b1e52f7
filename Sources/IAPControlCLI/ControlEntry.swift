/// `iapctl`'s main: an operator's command, it runs on Swift's own pool and stops at once on a signal.
public enum ControlEntry {
    public static func main() async { await ControlCommand.main() }
}
