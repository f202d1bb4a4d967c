import HTTPTypes
import Hummingbird
import Optimization

/// The OpenFeature Remote Evaluation Protocol routes (mounted only with
/// ``AppConfiguration/ofrepCredentials``): `POST /ofrep/v1/evaluate/flags` and
/// `POST /ofrep/v1/evaluate/flags/{key}`, answered by the library's `OFREPEvaluator`.
struct OFREPRoutes: Sendable {
    let evaluator: OFREPEvaluator

    func register(on router: Router<BasicRequestContext>) {
        router.post("/ofrep/v1/evaluate/flags") { request, context in await answer(request, context) }
        router.post("/ofrep/v1/evaluate/flags/:key") { request, context in await answer(request, context) }
    }

    private func answer(_ request: Request, _ context: BasicRequestContext) async -> Response {
        let limit = evaluator.configuration.maximumBodyBytes
        var body: [UInt8] = []
        var exceeded = false
        do {
            body = Array(try await request.body.collect(upTo: limit).readableBytesView)
        } catch {
            exceeded = true
        }
        let ofrepRequest = OFREPRequest(
            method: request.method.rawValue, path: request.uri.path,
            headers: request.headers.map { (name: $0.name.rawName, value: $0.value) }, body: body, bodyExceedsLimit: exceeded)
        guard let answer = await evaluator.respond(to: ofrepRequest) else { return Response(status: .notFound) }
        var headers = HTTPFields()
        for (name, value) in answer.headers {
            if let field = HTTPField.Name(name) { headers[field] = value }
        }
        headers[.cacheControl] = "no-store"
        return Response(
            status: HTTPResponse.Status(code: answer.status), headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
    }
}
