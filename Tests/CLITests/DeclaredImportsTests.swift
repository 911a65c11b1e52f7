import Foundation
import Testing

/// Every import of one of the package's own targets is declared in Package.swift: a target that
/// reaches another only through a third builds today and breaks when the third stops linking it
/// (issue 39 found four such). Package.swift is read as text: each target's `name:`, then the
/// `dependencies: [...]` that follows it (bracket-matched), its quoted names the targets it declares.
@Suite struct DeclaredImportsTests {
    /// Target name → the package targets it declares.
    static func declared() throws -> [String: Set<String>] {
        let text = try String(contentsOf: DocsLinkTests.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        var targets: [String: Set<String>] = [:]
        let kinds = [".target(", ".executableTarget(", ".testTarget("]
        var rest = Substring(text)
        while let start = kinds.compactMap({ rest.range(of: $0) }).min(by: { $0.lowerBound < $1.lowerBound }) {
            rest = rest[start.upperBound...]
            guard let nameRange = rest.range(of: "name: \""), let close = rest[nameRange.upperBound...].firstIndex(of: "\"") else { break }
            let name = String(rest[nameRange.upperBound..<close])
            var dependencies: Set<String> = []
            let nextTarget = kinds.compactMap { rest.range(of: $0)?.lowerBound }.min() ?? rest.endIndex
            if let list = rest.range(of: "dependencies: ["), list.lowerBound < nextTarget {
                var depth = 1
                var index = list.upperBound
                while depth > 0 && index < rest.endIndex {
                    if rest[index] == "[" { depth += 1 } else if rest[index] == "]" { depth -= 1 }
                    index = rest.index(after: index)
                }
                let body = rest[list.upperBound..<index]
                // Every quoted name: targets, and products and packages (which are never a target's name).
                let quoted = body.split(separator: "\"", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
                dependencies = Set(quoted)
            }
            targets[name] = dependencies
        }
        return targets
    }

    @Test func everyImportOfAPackageTargetIsDeclared() throws {
        let targets = try Self.declared()
        #expect(targets.count > 30, "read \(targets.count) targets from Package.swift")
        let root = DocsLinkTests.root
        var undeclared: [String] = []
        for (name, dependencies) in targets.sorted(by: { $0.key < $1.key }) {
            let folder = ["Sources", "Tests"].map { root.appendingPathComponent("\($0)/\(name)") }
                .first { FileManager.default.fileExists(atPath: $0.path) }
            guard let folder, let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else { continue }
            var imported: Set<String> = []
            for case let file as URL in files where file.pathExtension == "swift" {
                for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
                    let words = line.split(separator: " ").filter { !$0.hasPrefix("@") }
                    if words.count == 2, words[0] == "import" { imported.insert(String(words[1])) }
                }
            }
            for module in imported.sorted() where targets[module] != nil && module != name && !dependencies.contains(module) {
                undeclared.append("\(name) imports \(module)")
            }
        }
        #expect(undeclared.isEmpty, "declare them in Package.swift: \(undeclared)")
    }
}
