public import Foundation
import ReplicaCore

/// A prediction: an item (or an activity about nothing indexed) the person is likely to want next.
public struct RecentActivity: Sendable, Hashable {
    /// The item it is about, or the activity's own item identifier.
    public var identifier: ItemIdentifier
    /// The item's title, or the activity's.
    public var title: String?
    /// The activity's type; of the latest activity, when several are about the same item.
    public var activityType: String
    /// When the item was last viewed: the latest activity's date.
    public var lastViewed: Date
    /// How many times it was viewed, over all its activities.
    public var views: Int
    /// ``Engagement/value(lastViewed:views:now:)``, from 0 to 1.
    public var engagement: Double
    /// The entity the activity is about, if any.
    public var entity: EntityReference?

    package init(
        identifier: ItemIdentifier, title: String?, activityType: String, lastViewed: Date, views: Int,
        engagement: Double, entity: EntityReference?
    ) {
        self.identifier = identifier
        self.title = title
        self.activityType = activityType
        self.lastViewed = lastViewed
        self.views = views
        self.engagement = engagement
        self.entity = entity
    }
}
