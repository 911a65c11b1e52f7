import ArgumentParser
import IAPCLI
import IAPConsoleCLI
@testable import IAPControlCLI
import IAPIntakeCLI
import IAPWorkerCLI
import IAPSettings
import Testing

/// Each command's `--help` lists the settings it reads, and only those: the ones whose `Setting`
/// names the command in `readBy`.
@Suite struct SettingsHelpTests {
    static let redis: Set = [
        "IAP_REDIS_URL", "IAP_PREFIX", "IAP_BUCKETS", "IAP_REDIS_POOL_SIZE", "IAP_REDIS_TLS_CA_FILE", "IAP_REDIS_TLS_CERT_FILE",
        "IAP_REDIS_TLS_KEY_FILE", "IAP_REDIS_SENTINEL_PASSWORD",
    ]
    static let recheck: Set = ["IAP_RECHECK_BEFORE_S", "IAP_RECHECK_AFTER_S", "IAP_RECHECK_MAX"]

    /// The settings whose flags a help text lists.
    static func settings(in help: String) -> Set<String> {
        let flags = Set(help.matches(of: /--([a-z0-9-]+)/).map { String($0.output.1) })
        return Set(Settings.all.filter { flags.contains($0.flag) }.map(\.variable))
    }

    static func readBy(_ command: PipelineCommand) -> Set<String> {
        Set(Settings.all.filter { $0.readBy.contains(command) && !$0.environmentOnly }.map(\.variable))
    }

    static func commandAndSubcommands(_ command: any ParsableCommand.Type) -> [any ParsableCommand.Type] {
        [command] + command.configuration.subcommands.flatMap(commandAndSubcommands)
    }

    @Test func eachCommandTakesExactlyTheSettingsThatNameIt() {
        #expect(Self.settings(in: IntakeCommand.helpMessage()) == Self.readBy(.intake))
        #expect(Self.settings(in: VerifierCommand.helpMessage()) == Self.readBy(.verifier))
        #expect(Self.settings(in: DeduperCommand.helpMessage()) == Self.readBy(.deduper))
        #expect(Self.settings(in: GranterCommand.helpMessage()) == Self.readBy(.granter))
        #expect(Self.settings(in: NotifierCommand.helpMessage()) == Self.readBy(.notifier))
        #expect(Self.settings(in: WebhookCommand.helpMessage()) == Self.readBy(.webhook))
        #expect(Self.settings(in: ConsoleCommand.helpMessage()) == Self.readBy(.console))
        let iapctl = Self.commandAndSubcommands(ControlCommand.self).map { Self.settings(in: ControlCommand.helpMessage(for: $0)) }
        #expect(iapctl.reduce(into: Set()) { $0.formUnion($1) } == Self.readBy(.iapctl))
    }

    @Test func iapctlListsRedisAndWhatEachSubcommandReads() {
        #expect(Self.settings(in: ControlCommand.helpMessage(for: ControlCommand.self)).isEmpty)
        #expect(Self.settings(in: ControlCommand.helpMessage(for: ControlCommand.Stats.self)) == Self.redis.union(["IAP_LEASE_MS"]))
        #expect(Self.settings(in: ControlCommand.helpMessage(for: HeldCommand.Release.self)) == Self.redis.union(Self.recheck))
        #expect(Self.settings(in: ControlCommand.helpMessage(for: RecheckCommand.self)) == Self.redis)
        #expect(Self.settings(in: ControlCommand.helpMessage(for: GrantCommand.self)) == Self.redis)
        #expect(Self.settings(in: ControlCommand.helpMessage(for: RevokeCommand.self)) == Self.redis)
        #expect(Self.settings(in: ControlCommand.helpMessage(for: UserShowCommand.self)) == Self.redis.union(["IAP_PRODUCTS_FILE", "IAP_APPS_FILE"]))
        #expect(Self.settings(in: ControlCommand.helpMessage(for: UserEraseCommand.self)) == Self.redis.union(["IAP_APPS_FILE"]))
    }

    /// A flag's help is its setting's: the variable, the default and the range, in the setting's unit.
    @Test func aFlagsHelpComesFromItsSetting() {
        let help = WebhookCommand.helpMessage(columns: 400)
        #expect(help.contains("--webhook-timeout-ms <ms>"))
        #expect(help.contains("IAP_WEBHOOK_TIMEOUT_MS: each POST to the webhook (default 10000; 100...120000 ms)"))
        #expect(help.contains("--webhook-secret <text>"))
        #expect(help.contains("prefer the variable: flags show in ps"))
        #expect(IntakeCommand.helpMessage(columns: 400).contains("IAP_HTTP_PORT: the intake's port (0: any free port) (default 8080; 0...65535)"))
    }

    /// The on-call commands refuse what they cannot do before touching Redis.
    @Test func onCallCommandsCheckTheirArguments() throws {
        #expect(throws: (any Error).self) { try GrantCommand.parse(["--user", "u", "--product", "p", "--id", "c", "--quantity", "0"]) }
        #expect(throws: (any Error).self) { try GrantCommand.parse(["--user", "u", "--product", "p"]) }
        #expect(throws: (any Error).self) { try ControlCommand.Dead.Replay.parse(["--reason", "retries_exhausted", "T1"]) }
        #expect(try ControlCommand.Dead.Replay.parse(["--all", "--reason", "unknown_product", "--dry-run"]).dryRun)
        #expect(try ControlCommand.Stats.parse(["--watch", "--json"]).watch)
        #expect(try LookupCommand.parse(["order", "MK5TZ8Q2R1", "--grant-to", "player-7"]).grantTo == "player-7")
        #expect(try LookupCommand.parse(["transaction", "2000000000000001"]).kind == .transaction)
        #expect(throws: (any Error).self) { try LookupCommand.parse(["receipt", "MK5TZ8Q2R1"]) }
        #expect(throws: (any Error).self) { try LookupCommand.parse(["order", "MK5TZ8Q2R1", "--grant-to", ""]) }
    }

    /// An operator's decision names what it decides: units, or `--all` (optionally by reason).
    @Test func aHeldDecisionNeedsUnitsOrAll() throws {
        #expect(throws: (any Error).self) { try HeldCommand.Release.parse([]) }
        #expect(throws: (any Error).self) { try HeldCommand.Reject.parse(["--all", "u1"]) }
        #expect(throws: (any Error).self) { try HeldCommand.Release.parse(["--reason", "currency_unknown", "u1"]) }
        #expect(try HeldCommand.Release.parse(["--all", "--reason", "daily_limit_exceeded", "--by", "alice"]).decision.operatorName == "alice")
        #expect(try HeldCommand.Reject.parse(["u1", "u2", "--note", "chargeback"]).decision.ids == ["u1", "u2"])
    }

    @Test func aFlagWinsOverTheEnvironment() throws {
        let deduper = try DeduperCommand.parse(["--concurrency", "7", "--shutdown-grace-ms", "10", "--prefix", "other"])
        let configuration = loadConfiguration(of: deduper)
        #expect(configuration.worker.concurrency == 7)
        #expect(configuration.worker.shutdownGrace == .milliseconds(10))
        #expect(configuration.keys.prefix == "other")
    }

    /// A command reads the flags of every group it declares, found rather than listed again: what
    /// `--help` shows is what is read, nested groups (the console's) included.
    @Test func eachCommandReadsEveryGroupItDeclares() throws {
        func read(_ command: some ParsableArguments) -> Set<String> {
            Set(settingsGroups(of: command).flatMap { $0.flags.keys.map(\.variable) })
        }
        #expect(read(try IntakeCommand.parse([])) == Self.readBy(.intake))
        #expect(read(try VerifierCommand.parse([])) == Self.readBy(.verifier))
        #expect(read(try DeduperCommand.parse([])) == Self.readBy(.deduper))
        #expect(read(try GranterCommand.parse([])) == Self.readBy(.granter))
        #expect(read(try NotifierCommand.parse([])) == Self.readBy(.notifier))
        #expect(read(try WebhookCommand.parse([])) == Self.readBy(.webhook))
        #expect(read(try ConsoleCommand.parse([])) == Self.readBy(.console))
        #expect(read(try HeldCommand.Release.parse(["--all"])) == Self.redis.union(Self.recheck))
        let console = try ConsoleCommand.parse(["--prefix", "nested", "--recheck-max", "7"])
        #expect(loadConfiguration(of: console).redis.prefix == "nested")
        #expect(loadConfiguration(of: console).recheck.maxTries == 7)
    }

    @Test func aCommandRefusesAFlagItDoesNotRead() {
        #expect(throws: (any Error).self) { try GranterCommand.parse(["--apple-shared-secret", "x"]) }
        #expect(throws: (any Error).self) { try IntakeCommand.parse(["--concurrency", "3"]) }
    }
}
