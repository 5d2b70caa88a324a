import Foundation
import Replica

/// `replica entities import`: app entities, indexed directly.
enum EntitiesCommand: Command {
    static let name = "entities"
    static let summary = "index app entities (JSON lines) into an account"
    static let about = """
        Indexes app entities, one JSON object per line, as App Intents' indexAppEntities does:
          {"type": "LandmarkEntity", "id": "42", "title": "Matterhorn", "subtitle": "Zermatt",
           "priority": 10, "domainIdentifier": "landmarks.alps",
           "properties": {"description": {"key": "contentDescription", "value": "A pyramid-shaped peak"},
                          "continent": {"customKey": "com_example_continent", "value": "Europe"}},
           "attributes": {"latitude": 45.98, "longitude": 7.66}}
        Each entity becomes the item entity:TYPE:ID: indexing it again replaces it. The title and
        subtitle (indexed as headline) win over the properties, and the properties over "attributes".
        "key" names a Core Spotlight key, "customKey" one of the app's own. "priority" (0-100, default 0)
        raises an entity among matches that are otherwise about equal: up to 0.02 of a 0-1 score.
        Search results of entities carry "entity": {"type", "id"} (replica search --json, the search
        tool, replica get). Lines that cannot be read are reported and skipped, as replica import does.

        """
    static let options: [any OptionDeclaration] = ImportCommand.options
    static let synopses = [Synopsis("import", ImportFile.operand)]

    static func run(_ arguments: inout Arguments, context: Context) async throws {
        let _: ImportAction = try arguments.action(of: name)
        try await ImportCommand.run(&arguments, context: context, parse: SearchableItem.init(entityJSON:))
    }
}
