import ArgumentParser
import Foundation
import IAPPipeline

/// A group of `IAP_*` settings as flags. Each command declares the groups it reads (`@OptionGroup`),
/// so its `--help` lists only those; every setting is also read from the environment, and a flag
/// wins over the variable of the same name.
public protocol SettingsGroup: ParsableArguments {
    /// Each setting's variable and the flag's value, if given.
    var flags: [String: String?] { get }
}

/// The configuration from the environment and the flags of `groups`, or the process stops with one
/// line naming the bad variable.
public func loadConfiguration(_ groups: any SettingsGroup...) -> PipelineConfiguration {
    var environment = ProcessInfo.processInfo.environment
    for group in groups {
        for case let (name, value?) in group.flags { environment[name] = value }
    }
    do {
        return try PipelineConfiguration(environment: environment)
    } catch {
        failConfiguration(error)
    }
}

public func failConfiguration(_ error: ConfigurationError) -> Never {
    FileHandle.standardError.write(Data("configuration error: \(error)\n".utf8))
    Foundation.exit(2)
}
