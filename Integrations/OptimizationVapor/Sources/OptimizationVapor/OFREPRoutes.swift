import Optimization
import Vapor

extension RoutesBuilder {
    /// Mounts the OpenFeature Remote Evaluation Protocol routes, answered by `evaluator`:
    /// `POST ofrep/v1/evaluate/flags/:key` (one flag) and `POST ofrep/v1/evaluate/flags` (all of
    /// them, with an `ETag`), relative to this builder. The evaluator authenticates every request
    /// (`Authorization: Bearer …` or `X-API-Key`; 401 otherwise) and answers 200, 304, 400, 404,
    /// 429 or 500 as the protocol says; bodies over its `maximumBodyBytes` are 400. Every answer
    /// carries `Cache-Control: no-store`.
    ///
    /// Mounted only with credentials: `OFREPEvaluator` cannot be created without one, so a service
    /// without OFREP credentials simply does not call this. Needs no ``OptimizationMiddleware``
    /// (OpenFeature clients name the visitor in the body's `targetingKey`). The service must be
    /// running.
    /// - Returns: the two routes (bulk, then one flag).
    @discardableResult
    public func addOFREPRoutes(_ evaluator: OFREPEvaluator) -> [Route] {
        let prefix: [PathComponent] = ["ofrep", "v1", "evaluate", "flags"]
        let bulk = on(.POST, prefix, body: .stream) { request async throws -> Response in
            await evaluator.answer(request, ofrepPath: OFREPEvaluator.bulkPath)
        }
        let flag = on(.POST, prefix + [":key"], body: .stream) { request async throws -> Response in
            await evaluator.answer(request, ofrepPath: OFREPEvaluator.evaluatorPath(ofReceivedPath: request.url.path))
        }
        return [bulk, flag]
    }
}

extension OFREPEvaluator {
    /// `request` answered as a request on the OFREP path `ofrepPath` (so the routes work under any
    /// group prefix); a body over the evaluator's limit is passed on as exceeding it.
    fileprivate func answer(_ request: Request, ofrepPath: String) async -> Response {
        let body = try? await request.bodyBytes(upTo: configuration.maximumBodyBytes)
        let received = OFREPRequest(
            method: request.method.rawValue, path: ofrepPath,
            headers: request.headers.map { (name: $0.name, value: $0.value) }, body: body ?? [], bodyExceedsLimit: body == nil)
        guard let answer = await respond(to: received) else { return Response(status: .notFound) }
        var headers = HTTPHeaders()
        for (name, value) in answer.httpHeaders { headers.replaceOrAdd(name: name, value: value) }
        return Response(status: HTTPResponseStatus(statusCode: answer.status), headers: headers, body: .init(data: Data(answer.body)))
    }
}
