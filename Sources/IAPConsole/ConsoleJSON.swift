import Foundation
import PlainJSON

/// A page's JSON twin (`Accept: application/json`): the values its template is given, as JSON,
/// so a script reads what a person sees without scraping HTML.
enum ConsoleJSON {
    static func value(_ any: Any) -> JSONValue {
        switch any {
        case let text as String: .string(text)
        case let flag as Bool: .bool(flag)
        case let number as Int: .number(String(number))
        case let number as Int64: .number(String(number))
        case let number as Double: .number(String(number))
        case let items as [Any]: .array(items.map(value))
        case let members as [String: Any]: .object(members.mapValues(value))
        default: .string(String(describing: any))
        }
    }

    /// Whether the request asks for the twin rather than the page.
    static func isWanted(accept: String?) -> Bool {
        guard let accept else { return false }
        return accept.split(separator: ",").contains { $0.split(separator: ";").first?.trimmingCharacters(in: .whitespaces) == "application/json" }
    }
}
