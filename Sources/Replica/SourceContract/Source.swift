import Foundation

/// One change a source reports.
public enum SourceEvent: Sendable, Equatable {
    /// Index (or replace) an item; `entry` records what the source saw, for later reconciles.
    case upsert(SearchableItem, entry: SourceEntry?)
    /// Remove an item and forget its entry.
    case delete(ItemIdentifier, entryKey: String?)
    /// Remove every item whose identifier starts with `identifierPrefix` and every entry whose key
    /// starts with `entryKeyPrefix` (a directory that went away).
    case deletePrefix(identifierPrefix: String, entryKeyPrefix: String)
    /// Record an entry that made no item (binary, too large, unreadable), and remove its old items.
    case skip(SourceEntry, identifiers: [ItemIdentifier])
}

/// Changes a source commits together: all of them and the checkpoint in one transaction, or none.
public struct SourceBatch: Sendable, Equatable {
    /// The changes, applied in order.
    public var events: [SourceEvent]
    /// Where the source can resume from once this batch is committed (opaque to replica).
    public var checkpoint: String?

    /// Makes a batch of events with the checkpoint to record once they are committed.
    public init(events: [SourceEvent] = [], checkpoint: String? = nil) {
        self.events = events
        self.checkpoint = checkpoint
    }

    /// Whether the batch has no events and no checkpoint; committing it does nothing.
    public var isEmpty: Bool { events.isEmpty && checkpoint == nil }
}

/// What a source read of one thing that can change while it is read (a file): its key, the stamp it had
/// when it was read (`nil`: it was missing), and the events that make the index hold it as read.
package struct SourceReading: Sendable, Equatable {
    /// The entry key of the thing read (a file's path within the root).
    package var key: String
    /// The thing's stamp when it was read; `nil` when it was missing.
    package var stamp: String?
    /// The events that make the index hold the thing as it was read.
    package var events: [SourceEvent]

    /// Whether the reading is kept only while its stamp is current; events that read nothing (a folder
    /// gone, an entry skipped) are committed as they are.
    package var isChecked = true

    package init(key: String, stamp: String?, events: [SourceEvent]) {
        self.key = key
        self.stamp = stamp
        self.events = events
    }

    /// Events committed as they are, in their place among the readings.
    package static func unchecked(_ events: [SourceEvent]) -> SourceReading {
        var reading = SourceReading(key: "", stamp: nil, events: events)
        reading.isChecked = false
        return reading
    }
}

/// What a source tells the host about the current state of one of its items (hydration).
public enum SourceAnswer: Sendable, Equatable {
    /// The item exists, is readable, and is at `version`; with its full current content when it was asked
    /// for (`nil` otherwise).
    case current(SearchableItem?, version: String?)
    /// The item is gone, or no longer readable.
    case gone(reason: String)
}

/// A source of changes for one account: a file tree, a git repository, a plugin.
///
/// A source turns something outside into batches of events with a checkpoint it can resume from, and
/// commits them through its ``SourceContext``; it knows nothing of the index. Requirements:
/// - `sync` brings the index up to date with the source as it is now and returns; it must find changes
///   made while nothing was watching (by comparing with the entries the context holds, or by resuming
///   from the checkpoint).
/// - `watch` does what `sync` does, then follows changes until its task is cancelled. On cancellation
///   it commits what it has in flight and returns promptly (within a second or two). Its first pass,
///   many commits in a row, goes faster in ``SourceContext/load(isolation:_:)``, as the file-tree, git and
///   exec sources' do.
/// - A batch is committed whole or not at all: a source that fails halfway must not commit a half batch.
/// - `answer` tells the current state of some of its items — still there, readable, at which version —
///   with their full content when `includingContent` is set; it must not change anything.
public protocol Source: Sendable {
    /// The definition the source was made from: its name, kind, account, index and settings.
    /// It must not change while the source runs.
    var definition: SourceDefinition { get }

    /// One catch-up pass.
    func sync(_ context: SourceContext) async throws

    /// Catch up, then follow changes until cancelled.
    func watch(_ context: SourceContext) async throws

    /// The current state of these items, for hydration.
    func answer(_ identifiers: [ItemIdentifier], includingContent: Bool, _ context: SourceContext) async throws
        -> [ItemIdentifier: SourceAnswer]
}
