import Foundation
import Hummingbird
import WebImage

/// What the origin answers to `GET /robots.txt`, set by a test with ``ImageOrigin/setRobots(_:)``
/// (until then: 404, no robots.txt). Each request is logged like any other, so a test can count
/// how often a client asked.
///
/// ```swift
/// origin.setRobots(.file("User-agent: *\nDisallow: /images/private\n", delay: .milliseconds(300)))
/// origin.requestCount(path: "/robots.txt")  // 1 after a polite run
/// ```
public enum RobotsAnswer: Sendable {
    /// `status` (default 200) with `body`, after `delay`.
    case file(String, status: Int = 200, delay: Duration = .zero)
    /// 200 with `body` repeated without end (a client must stop reading).
    case endless(String)
    /// A redirect to `location` (`/redirect/loop` redirects to itself).
    case redirect(String)
}

/// The answer a test set, shared by the route and ``ImageOrigin/setRobots(_:)``.
final class RobotsSetting: Sendable {
    private let answer = Locked<RobotsAnswer?>(nil)
    var current: RobotsAnswer? {
        get { answer.withLock { $0 } }
        set { answer.withLock { $0 = newValue } }
    }
}

enum RobotsRoutes {
    static func add(to router: Router<BasicRequestContext>, setting: RobotsSetting) {
        router.get("/robots.txt") { _, _ in
            switch setting.current {
            case nil:
                return OriginRoutes.text("no robots.txt\n", status: .notFound)
            case let .file(body, status, delay):
                if delay > .zero { try await Task.sleep(for: delay) }
                return OriginRoutes.text(body, status: .init(code: status))
            case .endless(let body):
                let chunk = ByteBuffer(string: body)
                return Response(status: .ok, headers: [.contentType: "text/plain"], body: ResponseBody { writer in
                    while !Task.isCancelled { try await writer.write(chunk) }
                    try await writer.finish(nil)
                })
            case .redirect(let location):
                return BehaviourRoutes.redirect(to: location)
            }
        }
    }
}
