import IAPSettings
import IAPStages
import Testing

/// The settings' descriptors hold: each is well formed, its default parses, and every range and
/// choice it declares is what the parse enforces, with the variable named.
@Suite struct SettingTests {
    @Test func everySettingIsWellFormedAndNamedOnce() {
        let variables = Settings.all.map(\.variable)
        #expect(Set(variables).count == variables.count)
        #expect(Set(Settings.all.map(\.flag)).count == variables.count)
        for setting in Settings.all {
            #expect(setting.variable.wholeMatch(of: /IAP_[A-Z0-9_]+/) != nil)
            #expect(!setting.help.isEmpty && !setting.readBy.isEmpty)
            if case .duration(let unit, _) = setting.kind {
                #expect(setting.variable.hasSuffix(unit == .milliseconds ? "_MS" : "_S"), "\(setting): a duration's name says its unit")
            }
        }
        #expect(Settings.named("IAP_LEASE_MS") == Settings.lease)
        #expect(Settings.lease.flag == "lease-ms")
    }

    @Test func theDefaultsParse() throws {
        let configuration = try PipelineConfiguration(environment: [:])
        #expect(configuration.worker.lease == .seconds(30) && configuration.verifyReceipt.timeout == .seconds(15))
        for setting in Settings.all where setting.defaultValue != nil {
            switch setting.kind {
            case .count, .bytes: _ = try SettingSource.defaults.count(setting)
            case .duration: _ = try SettingSource.defaults.duration(setting)
            case .choice: _ = try SettingSource.defaults.choice(setting)
            case .url: _ = try SettingSource.defaults.url(setting)
            case .text, .secret, .redisURL, .file, .list: #expect(SettingSource.defaults.text(setting) != nil)
            }
        }
    }

    /// Just outside each declared range, and a word not among a choice's, is refused by name.
    @Test func eachRangeAndChoiceIsEnforced() {
        var cases: [(Setting, String)] = []
        for setting in Settings.all where !setting.environmentOnly {
            switch setting.kind {
            case .count(let range), .bytes(let range):
                cases.append((setting, String(range.lowerBound - 1)))
                if range.upperBound < .max { cases.append((setting, String(range.upperBound + 1))) }
                cases.append((setting, "12x"))
            case .duration(let unit, let range):
                let below = range.lowerBound - .milliseconds(unit == .milliseconds ? 1 : 1000)
                let above = range.upperBound + .milliseconds(unit == .milliseconds ? 1 : 1000)
                cases += [(setting, unit.format(below)), (setting, unit.format(above)), (setting, "soon")]
            case .choice:
                cases.append((setting, "neither"))
            case .url:
                cases.append((setting, "ftp://example.com/x"))
            case .text, .secret, .redisURL, .file, .list:
                break
            }
        }
        #expect(cases.count > 60)
        for (setting, value) in cases {
            #expect("\(setting)=\(value)") { try PipelineConfiguration(environment: [setting.variable: value]) } throws: { error in
                (error as? ConfigurationError)?.variable == setting.variable
            }
        }
    }

    @Test func aFlagWinsOverTheVariableAndUnitsAreTheNames() throws {
        let configuration = try PipelineConfiguration(
            environment: ["IAP_LEASE_MS": "5000", "IAP_RECHECK_AFTER_S": "0.25", "IAP_CONCURRENCY": "3", "IAP_PREFIX": " "],
            flags: ["IAP_LEASE_MS": "7000"])
        #expect(configuration.worker.lease == .seconds(7))
        #expect(configuration.recheck.after == .milliseconds(250))
        #expect(configuration.worker.concurrency == 3)
        // Blank is unset: the default.
        #expect(configuration.redis.prefix == "iap")
        #expect(Setting.DurationUnit.seconds.format(.milliseconds(1500)) == "1.5")
    }
}
