import Foundation
import IAPSettings
import Testing

/// `docs/configuration.md` shows the settings as `Settings` describes them, and every `IAP_*`
/// variable the code names is one of them.
@Suite struct SettingsDocsTests {
    @Test func theConfigurationTableIsCurrent() throws {
        let file = DocsLinkTests.root.appendingPathComponent("docs/configuration.md")
        let document = try String(contentsOf: file, encoding: .utf8)
        let updated = try #require(Settings.updatingMarkdown(in: document), "docs/configuration.md lost its generated-table markers")
        #expect(updated == document, "docs/configuration.md is not current: run swift run iapctl settings --write-docs docs/configuration.md")
        for setting in Settings.all { #expect(document.contains("| `\(setting.variable)` |")) }
    }

    @Test func everyVariableTheCodeNamesIsASetting() throws {
        let sources = DocsLinkTests.root.appendingPathComponent("Sources")
        let walker = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        var named: Set<String> = []
        for case let url as URL in walker where url.pathExtension == "swift" {
            let text = try String(contentsOf: url, encoding: .utf8)
            named.formUnion(text.matches(of: /"(IAP_[A-Z0-9_]*[A-Z0-9])"/).map { String($0.output.1) })
        }
        let known = Set(Settings.all.map(\.variable))
        #expect(named.subtracting(known).isEmpty, "variables without a Setting: \(named.subtracting(known).sorted())")
        #expect(named.count > 40)
    }
}
