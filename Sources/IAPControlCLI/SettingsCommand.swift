import ArgumentParser
import Foundation
import IAPCLI
import IAPSettings
import IAPStages

/// `iapctl settings`: every `IAP_*` setting with the value this environment gives it (secrets
/// hidden, a URL's password masked), or the table of `docs/configuration.md`.
struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "List every IAP_* setting: its value here (secrets hidden) and where it comes from; or write the docs' table.")
    @Flag(help: "Print the Markdown table of docs/configuration.md instead.") var markdown = false
    @Option(help: "Rewrite the generated table of this file (docs/configuration.md) in place.") var writeDocs: String?

    func run() throws {
        if let path = writeDocs { return try write(path) }
        if markdown { return print(Settings.markdownTable()) }
        let environment = ProcessInfo.processInfo.environment
        let source = SettingSource(environment: environment)
        for setting in Settings.all {
            let shown: String
            if let given = source.given(setting) {
                shown = setting.shown(given) + "  [environment]"
            } else if let defaultValue = setting.defaultValue {
                shown = defaultValue + "  [default]"
            } else {
                shown = "unset" + (setting.unset.map { ": \($0)" } ?? "")
            }
            print("\(setting.variable)=\(shown)")
        }
        do {
            _ = try PipelineConfiguration(source)
        } catch {
            print("configuration error: \(error)")
            throw ExitCode(2)
        }
    }

    private func write(_ path: String) throws {
        guard let document = FileManager.default.contents(atPath: path).map({ String(decoding: $0, as: UTF8.self) }) else {
            throw ValidationError("cannot read \(path)")
        }
        guard let updated = Settings.updatingMarkdown(in: document) else {
            throw ValidationError("\(path) has no generated table: add the lines \(Settings.markdownBegin) and \(Settings.markdownEnd)")
        }
        try Data(updated.utf8).write(to: URL(fileURLWithPath: path))
        print(updated == document ? "\(path) is current" : "\(path) updated")
    }
}
