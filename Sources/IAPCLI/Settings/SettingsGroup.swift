import ArgumentParser
import Foundation
import IAPSettings
import IAPStages
import Logging

/// A group of `IAP_*` settings as flags. Each command declares the groups it reads (`@OptionGroup`),
/// so its `--help` lists only those; every setting is also read from the environment, and a flag
/// wins over the variable of the same name. A flag is one line, `@Option(setting: Settings.x)
/// var <flag in camel case>: String?`: its name and help come from the `Setting`, and the
/// property's name says which setting its value is (`flags`).
package protocol SettingsGroup: ParsableArguments {}

extension SettingsGroup {
    /// Each setting of the group and the flag's value, if given: read off the group's options,
    /// each named after its flag (`--redis-url`: `redisUrl`; `SettingsGroupTests` holds every
    /// group to it).
    package var flags: [Setting: String?] {
        var flags: [Setting: String?] = [:]
        for child in Mirror(reflecting: self).children {
            guard let option = child.value as? Option<String?>, let label = child.label,
                  let setting = Setting.byProperty[String(label.drop { $0 == "_" })]
            else { continue }
            flags[setting] = option.wrappedValue
        }
        return flags
    }

    /// How many options the group has (what `flags` must account for).
    package var optionCount: Int { Mirror(reflecting: self).children.filter { $0.value is Option<String?> }.count }
}

extension Option where Value == String? {
    /// The flag of `setting`: its name and help come from the setting.
    package init(setting: Setting) {
        self.init(name: setting.name, help: setting.argumentHelp)
    }
}

extension Setting {
    /// Every setting by the name of the property that holds its flag in a `SettingsGroup`: the
    /// flag in camel case (`--redis-url`: `redisUrl`).
    static let byProperty: [String: Setting] = Dictionary(
        uniqueKeysWithValues: Settings.all.map { ($0.flagProperty, $0) })

    /// The flag in camel case: `redisUrl` for `--redis-url`.
    var flagProperty: String {
        let words = flag.split(separator: "-")
        return String(words.first ?? "") + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    /// The flag: `--redis-url` for `IAP_REDIS_URL`.
    package var name: NameSpecification { .customLong(flag) }

    /// What `--help` says: the variable, what it does, its default and its range.
    package var argumentHelp: ArgumentHelp {
        var facts: [String] = []
        if let defaultValue { facts.append("default \(defaultValue)") } else if let unset { facts.append("unset: \(unset)") }
        if let range = kind.rangeText { facts.append(range) }
        if isSecret { facts.append("prefer the variable: flags show in ps") }
        let suffix = facts.isEmpty ? "" : " (\(facts.joined(separator: "; ")))"
        return ArgumentHelp("\(variable): \(help)\(suffix)", valueName: kind.valueName)
    }
}

extension Setting.Kind {
    /// The placeholder `--help` shows for the value.
    var valueName: String {
        switch self {
        case .text, .secret: "text"
        case .url, .redisURL: "url"
        case .file: "path"
        case .list: "a,b,…"
        case .count: "n"
        case .bytes: "bytes"
        case .duration(let unit, _): unit.rawValue
        case .choice(let words): words.joined(separator: "|")
        }
    }
}

/// The configuration from the environment and the flags of every settings group `command`
/// declares (`settingsGroups(of:)`), or the process stops with one line naming the bad variable.
/// The groups are found, not listed again, so a group's flags cannot be shown by `--help` and
/// then not read.
package func loadConfiguration(of command: some ParsableArguments) -> PipelineConfiguration {
    loadConfiguration(settingsGroups(of: command))
}

/// Every settings group `arguments` declares with `@OptionGroup`, and those of the option groups
/// it declares that hold settings groups in turn (`ConsoleServerOptions`), in declaration order.
package func settingsGroups(of arguments: any ParsableArguments) -> [any SettingsGroup] {
    Mirror(reflecting: arguments).children.flatMap { child -> [any SettingsGroup] in
        guard let declared = (child.value as? any DeclaredOptionGroup)?.declared else { return [] }
        if let group = declared as? any SettingsGroup { return [group] }
        return settingsGroups(of: declared)
    }
}

/// An `@OptionGroup` seen through `Mirror`: what it holds, whatever its type.
protocol DeclaredOptionGroup {
    var declared: any ParsableArguments { get }
}

extension OptionGroup: DeclaredOptionGroup {
    var declared: any ParsableArguments { wrappedValue }
}

/// The configuration from the environment and the flags of `groups`, or the process stops with one
/// line naming the bad variable.
package func loadConfiguration(_ groups: [any SettingsGroup]) -> PipelineConfiguration {
    do {
        return try PipelineConfiguration(settingSource(groups))
    } catch {
        failConfiguration(error)
    }
}

/// The environment with the flags of `groups` over it: what a component reads its own settings from.
package func settingSource(_ groups: [any SettingsGroup]) -> SettingSource {
    var flags: [String: String] = [:]
    for group in groups {
        for case let (setting, value?) in group.flags { flags[setting.variable] = value }
    }
    return SettingSource(environment: ProcessInfo.processInfo.environment, flags: flags)
}

package func failConfiguration(_ error: ConfigurationError) -> Never {
    FileHandle.standardError.write(Data("configuration error: \(error)\n".utf8))
    Foundation.exit(2)
}

/// One warning line for each file of secrets (`Settings.secretFiles`) that group or others may
/// read: the path and the variable, never the content.
package func warnOfExposedSecretFiles(_ configuration: PipelineConfiguration, logger: Logger) {
    for exposed in configuration.exposedSecretFiles() {
        logger.warning(
            "a file of secrets may be read by group or others: chmod 600 it", metadata: ["setting": "\(exposed.variable)", "path": "\(exposed.path)"])
    }
}
