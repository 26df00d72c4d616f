import DaemonCore
import Foundation
import QueuePlayer

extension WebServer {
    /// Pushes the chapter heard to every client, and the item's chapter list first when the
    /// item is new: `{"event": "chapters", "songid": N, "chapters": [...]}` then
    /// `{"event": "chapter", "songid": N, "chapter": 2, "title": ..., "start": ..., "end": ...}`
    /// (`chapter` null when none is heard). Any thread (the chapter follower's).
    package func chapterChanged(_ item: PlayerItem, index: Int?, newItem: Bool, partition: any PublishedPlayback) {
        let songID = partition.songID(of: item)
        let chapters = item.chapters
        if newItem { clients.broadcast(WebClients.chaptersEvent(chapters, songID: songID)) }
        clients.broadcast(WebClients.chapterEvent(index.flatMap { $0 < chapters.count ? ($0, chapters[$0]) : nil }, songID: songID))
    }
}

extension WebClients {
    /// `{"event": "chapters", "songid": 3, "chapters": [{"chapter": 1, "title": "Intro", "start": 0.0,
    /// "end": 61.5, "url": "https://...", "img": "https://..."}, ...]}` (`url` and `img` only when given).
    static func chaptersEvent(_ chapters: [Chapter], songID: Int?) -> JSONValue {
        .object([("event", .string("chapters")), ("songid", songID.map { .int($0) } ?? .null),
                 ("chapters", .array(chapters.enumerated().map { chapterObject($1, number: $0 + 1) }))])
    }

    /// `{"event": "chapter", "songid": 3, "chapter": 2, "title": "...", "start": 61.5, "end": 130.0}`,
    /// or `"chapter": null` (and no more) when no chapter is heard.
    static func chapterEvent(_ current: (index: Int, chapter: Chapter)?, songID: Int?) -> JSONValue {
        var fields: [(String, JSONValue)] = [("event", .string("chapter")), ("songid", songID.map { .int($0) } ?? .null)]
        if let current {
            guard case .object(let chapter) = chapterObject(current.chapter, number: current.index + 1) else { return .null }
            fields += chapter
        } else {
            fields.append(("chapter", .null))
        }
        return .object(fields)
    }

    private static func chapterObject(_ chapter: Chapter, number: Int) -> JSONValue {
        var fields: [(String, JSONValue)] = [("chapter", .int(number)), ("title", .string(chapter.title)),
                                             ("start", .double(chapter.start)), ("end", .double(chapter.end))]
        if let url = chapter.url { fields.append(("url", .string(url.absoluteString))) }
        switch chapter.picture {
        case .remote(let url): fields.append(("img", .string(url.absoluteString)))
        case .embedded, nil: break
        }
        return .object(fields)
    }
}
