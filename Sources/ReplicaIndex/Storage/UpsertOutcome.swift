import Foundation
import ReplicaCore
import ReplicaText

/// What indexing one item did.
package enum UpsertOutcome: Equatable {
    case inserted, replaced, merged
    /// The same item again: nothing but its source version was written.
    case unchanged
    /// An update (`isUpdate`) for an item that is not in the index; ignored, as Core Spotlight does.
    case ignoredUpdate
    /// Another owner made the item under this identifier: nothing was written (see
    /// ``IndexWriter/refusedOwnership``).
    case notOwned
}
