import IAPCLI

/// `iap-intake`'s main.
package enum IntakeEntry {
    package static func main() async { await ProcessEntry.serve(IntakeCommand.self) }
}
