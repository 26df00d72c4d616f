#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Hummingbird
import NIOCore

/// The web page's files, compiled into the binary (SwiftPM's `embedInCode`: an installed daemon
/// is one file, and nothing outside these three is ever served: there is no path to resolve).
enum WebResources {
    /// The security headers of every response: the page loads nothing but its own files and
    /// talks to nothing but its own origin (no CDN; works offline), and no other site may frame it.
    private static let securityHeaders: HTTPFields = [
        .contentSecurityPolicy: "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            + "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        .xContentTypeOptions: "nosniff",
        .referrerPolicy: "no-referrer",
        .cacheControl: "no-cache",
    ]

    static func response(for file: String, settingToken token: String?) -> Response {
        let (bytes, type): ([UInt8], String) = switch file {
        case "app.js": (PackageResources.app_js, "text/javascript; charset=utf-8")
        case "style.css": (PackageResources.style_css, "text/css; charset=utf-8")
        default: (PackageResources.index_html, "text/html; charset=utf-8")
        }
        var headers = securityHeaders
        headers[.contentType] = type
        if let token, file == "index.html", token.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != ";" && $0 != "," }) {
            // The page's own requests (its files, the WebSocket) then carry the token by themselves.
            headers[.setCookie] = "\(WebAccess.cookieName)=\(token); HttpOnly; SameSite=Strict; Path=/"
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func refusal(_ status: HTTPResponse.Status, _ reason: String) -> Response {
        Response(status: status, headers: refusalHeaders, body: .init(byteBuffer: ByteBuffer(string: reason + "\n")))
    }

    /// The headers of a refusal (a line of plain text), also sent by ``HTTPRequestGuard``.
    static let refusalHeaders: HTTPFields = {
        var headers = securityHeaders
        headers[.contentType] = "text/plain; charset=utf-8"
        return headers
    }()
}

extension HTTPField.Name {
    static let xContentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
}
