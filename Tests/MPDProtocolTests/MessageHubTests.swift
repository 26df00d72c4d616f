import MPDProtocol
import Testing

@Suite struct MessageHubTests {
    @Test func aMessageReachesEverySubscriberOnceAndOnlyThem() throws {
        var hub = MessageHub()
        try hub.subscribe(1, to: "news")
        try hub.subscribe(2, to: "news")
        try hub.subscribe(3, to: "other")
        #expect(try hub.send("hello", to: "news") == [1, 2], "both inboxes were empty: both are woken")
        #expect(try hub.send("again", to: "news").isEmpty, "unread messages already woke them")
        #expect(hub.read(1) == [.init(channel: "news", text: "hello"), .init(channel: "news", text: "again")])
        #expect(hub.read(1).isEmpty, "reading empties the inbox")
        #expect(hub.read(3).isEmpty)
        #expect(try hub.send("third", to: "news") == [1], "client 1 read its messages; client 2 has not")
        #expect(hub.read(2).count == 3)
    }

    @Test func channelsListsWhatAnyoneIsSubscribedTo() throws {
        var hub = MessageHub()
        try hub.subscribe(1, to: "b")
        try hub.subscribe(2, to: "a")
        try hub.subscribe(2, to: "b")
        #expect(hub.channels == ["a", "b"])
        try hub.unsubscribe(2, from: "a")
        #expect(hub.channels == ["b"])
        var changed = hub.remove(1)
        #expect(changed)
        #expect(hub.channels == ["b"])
        changed = hub.remove(2)
        #expect(changed)
        #expect(hub.channels.isEmpty)
        changed = hub.remove(2)
        #expect(!changed, "a client without subscriptions changes no channel")
    }

    @Test func errorsAreMPDs() throws {
        var hub = MessageHub()
        #expect(throws: MPDError(.argument, "invalid channel name")) { try hub.subscribe(1, to: "bad name") }
        #expect(throws: MPDError(.argument, "invalid channel name")) { try hub.subscribe(1, to: "") }
        try hub.subscribe(1, to: "ok_chan-1.2:3")
        #expect(throws: MPDError(.exist, "already subscribed to this channel")) { try hub.subscribe(1, to: "ok_chan-1.2:3") }
        #expect(throws: MPDError(.noExist, "not subscribed to this channel")) { try hub.unsubscribe(1, from: "other") }
        #expect(throws: MPDError(.noExist, "nobody is subscribed to this channel")) { _ = try hub.send("x", to: "other") }
        #expect(throws: MPDError(.argument, "invalid channel name")) { _ = try hub.send("x", to: "a/b") }
        for index in 1..<MessageHub.maxSubscriptions { try hub.subscribe(1, to: "c\(index)") }
        #expect(throws: MPDError(.exist, "subscription list is full")) { try hub.subscribe(1, to: "one-more") }
    }

    @Test func aFullInboxDropsNewMessagesForThatClientOnly() throws {
        var hub = MessageHub()
        try hub.subscribe(1, to: "c")
        for index in 0..<MessageHub.maxUnreadMessages { _ = try hub.send("\(index)", to: "c") }
        try hub.subscribe(2, to: "c")
        #expect(try hub.send("late", to: "c") == [2])
        #expect(hub.read(1).count == MessageHub.maxUnreadMessages)
        #expect(hub.read(2) == [.init(channel: "c", text: "late")])
        hub.remove(2)
        #expect(throws: MPDError(.noExist, "nobody is subscribed to this channel")) {
            for index in 0...MessageHub.maxUnreadMessages { _ = try hub.send("\(index)", to: "c") }
        }
    }
}
