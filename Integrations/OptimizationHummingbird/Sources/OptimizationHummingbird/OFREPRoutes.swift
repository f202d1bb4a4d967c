import HTTPTypes
import Hummingbird
import Optimization

extension RouterMethods {
    /// Mounts the OpenFeature Remote Evaluation Protocol routes, answered by `evaluator`:
    /// `POST ofrep/v1/evaluate/flags/{key}` (one flag) and `POST ofrep/v1/evaluate/flags` (all of
    /// them, with an `ETag`), relative to the router or group. The evaluator authenticates every
    /// request (`Authorization: Bearer …` or `X-API-Key`; 401 otherwise) and answers 200, 304,
    /// 400, 404, 429 or 500 as the protocol says; bodies over its `maximumBodyBytes` are 400.
    /// Every answer carries `Cache-Control: no-store`.
    ///
    /// Mounted only with credentials: `OFREPEvaluator` cannot be created without one, so a service
    /// without OFREP credentials simply does not call this. Needs no ``OptimizationMiddleware``
    /// (OpenFeature clients name the visitor in the body's `targetingKey`). The service must be
    /// running.
    /// - Returns: the router or group, for chaining.
    @discardableResult
    public func addOFREPRoutes(_ evaluator: OFREPEvaluator) -> Self {
        post("ofrep/v1/evaluate/flags") { request, _ in
            await OFREPRoute.answer(request, path: OFREPEvaluator.bulkPath, evaluator: evaluator)
        }
        post("ofrep/v1/evaluate/flags/:key") { request, _ in
            await OFREPRoute.answer(request, path: OFREPEvaluator.evaluatorPath(ofReceivedPath: request.uri.path), evaluator: evaluator)
        }
        return self
    }
}

/// The OFREP routes' handler.
enum OFREPRoute {
    /// `request` answered by `evaluator` as a request on the OFREP path `path` (so the routes
    /// work under any group prefix).
    static func answer(_ request: Request, path: String, evaluator: OFREPEvaluator) async -> Response {
        let limit = evaluator.configuration.maximumBodyBytes
        var body: [UInt8] = []
        var exceeded = false
        do {
            body = Array(try await request.body.collect(upTo: limit).readableBytesView)
        } catch {
            exceeded = true
        }
        let ofrepRequest = OFREPRequest(
            method: request.method.rawValue, path: path,
            headers: request.headers.map { (name: $0.name.rawName, value: $0.value) }, body: body, bodyExceedsLimit: exceeded)
        guard let answer = await evaluator.respond(to: ofrepRequest) else { return Response(status: .notFound) }
        var headers = HTTPFields()
        for (name, value) in answer.httpHeaders {
            if let field = HTTPField.Name(name) { headers[field] = value }
        }
        return Response(
            status: HTTPResponse.Status(code: answer.status), headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
    }
}
