import Foundation
import Replica

/// One line of a plugin's output, read and checked: the protocol in `Plugins/README.md`, as values.
///
/// Reading is separate from acting on the message, so that every line a plugin could write is read the
/// same way everywhere (and fuzzed: `Fuzz/run.sh plugin`).
enum PluginMessage: Sendable {
    /// An item to index; `item` is a `replica import` line, its identifier the plugin's own key.
    case upsert(SearchableItem, version: String?)
    /// An upsert whose item cannot be indexed: why (the rest of the batch goes on).
    case badUpsert(ReplicaError)
    case delete(key: String)
    /// A delete without a key (reported and skipped).
    case badDelete
    case commit(checkpoint: String?)
    case idle
    case pong
    case log(level: String?, message: String?)
    /// The answer to a hydration request: items as they are now, and keys gone with their reasons.
    case hydrated(items: [(item: SearchableItem, version: String?)], gone: [(key: String, reason: String?)])

    /// Why a line is not a protocol message (the plugin is then stopped).
    enum Problem: Error, Equatable {
        case notAMessage
        case unknownType(String)
    }

    /// Reads one line.
    ///
    /// - Throws: ``Problem`` when the line is not a JSON object with a known `type`.
    static func read(_ text: String) throws(Problem) -> PluginMessage {
        guard let value = try? JSON.parse(text), value.objectValue != nil, let type = value["type"]?.stringValue else {
            throw .notAMessage
        }
        switch type {
        case "upsert":
            guard let json = value["item"] else {
                return .badUpsert(ReplicaError(.invalidItem, "an upsert needs an 'item'"))
            }
            do {
                let item = try SearchableItem(json: json)
                return .upsert(item, version: value["version"]?.stringValue ?? json["version"]?.stringValue)
            } catch let error as ReplicaError {
                return .badUpsert(error)
            } catch {
                return .badUpsert(ReplicaError(.invalidItem, "the item cannot be read"))
            }
        case "delete":
            guard let key = value["uniqueIdentifier"]?.stringValue, !key.isEmpty else { return .badDelete }
            return .delete(key: key)
        case "commit":
            return .commit(checkpoint: value["checkpoint"]?.stringValue)
        case "idle":
            return .idle
        case "pong":
            return .pong
        case "log":
            return .log(level: value["level"]?.stringValue, message: value["message"]?.stringValue)
        case "hydrated":
            let items = (value["items"]?.arrayValue ?? []).compactMap { entry -> (SearchableItem, String?)? in
                guard let item = try? SearchableItem(json: entry) else { return nil }
                return (item, entry["version"]?.stringValue)
            }
            let gone = (value["gone"]?.arrayValue ?? []).compactMap { entry -> (String, String?)? in
                entry["uniqueIdentifier"]?.stringValue.map { ($0, entry["reason"]?.stringValue) }
            }
            return .hydrated(items: items, gone: gone)
        default:
            throw .unknownType(type)
        }
    }
}
