import IAPCLI

/// `iap-intake`'s main.
public enum IntakeEntry {
    public static func main() async { await ProcessEntry.serve(IntakeCommand.self) }
}
