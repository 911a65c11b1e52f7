import Foundation
import Testing

/// The front page and the docs hold together: every relative link in README.md, CONTRIBUTING.md
/// and docs/ names a file that exists and, with `#anchor`, a heading in it (GitHub's slugs).
@Suite struct DocsLinkTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func markdownFiles() throws -> [URL] {
        var files = [root.appendingPathComponent("README.md"), root.appendingPathComponent("CONTRIBUTING.md")]
        let docs = root.appendingPathComponent("docs")
        guard let walker = FileManager.default.enumerator(at: docs, includingPropertiesForKeys: nil) else { return files }
        for case let url as URL in walker where url.pathExtension == "md" { files.append(url) }
        return files
    }

    /// GitHub's anchor for a heading: lowercase, punctuation dropped, spaces as hyphens.
    static func slug(_ heading: String) -> String {
        String(heading.lowercased().unicodeScalars.compactMap { scalar -> Character? in
            if scalar == " " { return "-" }
            if CharacterSet.alphanumerics.contains(scalar) || scalar == "-" || scalar == "_" { return Character(scalar) }
            return nil
        })
    }

    static func anchors(of file: URL) throws -> Set<String> {
        var inFence = false
        var anchors: Set<String> = []
        for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inFence.toggle() }
            guard !inFence, line.hasPrefix("#") else { continue }
            anchors.insert(slug(line.drop(while: { $0 == "#" }).trimmingCharacters(in: .whitespaces)))
        }
        return anchors
    }

    /// The targets of `[text](target)` outside code, relative ones only.
    static func relativeLinks(in text: String) -> [String] {
        var links: [String] = []
        var inFence = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inFence.toggle() }
            if inFence { continue }
            var rest = Substring(line)
            while let open = rest.range(of: "](") {
                let after = rest[open.upperBound...]
                guard let close = after.firstIndex(of: ")") else { break }
                let target = String(after[..<close])
                if !target.contains("://"), !target.hasPrefix("mailto:"), !target.contains(" ") { links.append(target) }
                rest = after[close...]
            }
        }
        return links
    }

    @Test func everyRelativeLinkResolvesToAFileAndHeading() throws {
        var checked = 0
        for file in try Self.markdownFiles() {
            for link in Self.relativeLinks(in: try String(contentsOf: file, encoding: .utf8)) {
                let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let target = parts[0].isEmpty ? file : file.deletingLastPathComponent().appendingPathComponent(parts[0]).standardizedFileURL
                #expect(FileManager.default.fileExists(atPath: target.path), "\(file.lastPathComponent): \(link) names no file")
                if parts.count == 2, target.pathExtension == "md", FileManager.default.fileExists(atPath: target.path) {
                    #expect(try Self.anchors(of: target).contains(parts[1]), "\(file.lastPathComponent): \(link) names no heading")
                }
                checked += 1
            }
        }
        #expect(checked > 20, "the docs link to each other: \(checked) links found")
    }

    @Test func theReadmeIsAFrontPage() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.split(separator: "\n", omittingEmptySubsequences: false).count <= 150)
        #expect(readme.contains("workers/run") && readme.contains("workers/test"))
    }

    @Test func slugsAreGitHubs() {
        #expect(Self.slug("Purchase policy: the seeds' fraud rules") == "purchase-policy-the-seeds-fraud-rules")
        #expect(Self.slug("`POST /v1/receipts`") == "post-v1receipts")
    }
}
