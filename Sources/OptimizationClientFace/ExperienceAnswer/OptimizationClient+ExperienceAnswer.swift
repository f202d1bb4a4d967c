import OptimizationVocabulary
import JavaScriptHost
import OptimizationContent
import OptimizationEngine
import OptimizationJSON

extension OptimizationClient {
    /// Reads an Experience API answer (`{"data": {"profile", "experiences", "changes"}, "error"}`)
    /// held by the caller (saved to a file, kept in a cache) exactly as the delivery path reads a
    /// live one: the shared core's parse, with its validation.
    ///
    /// Nothing is applied to the client's state and nothing is sent.
    ///
    /// Threading: synchronous, safe from any thread (the engine's lock for one call).
    /// - Parameters:
    ///   - text: the answer's JSON text.
    ///   - apiVersion: the protocol the answer follows (it decides the shape of `error`);
    ///     default `OptimizationAPIVersion/v2`.
    /// - Throws: ``ExperienceAnswerError/invalid(_:)`` naming what is wrong;
    ///   ``ExperienceAnswerError/notInitialized`` before `initialize` or after `destroy`.
    public func parseExperienceAnswer(
        _ text: String, apiVersion: OptimizationAPIVersion = .v2
    ) throws(ExperienceAnswerError) -> ExperienceAnswer {
        guard let runtime = currentRuntime else { throw .notInitialized }
        let result: JavaScriptValue
        do {
            result = try runtime.engine.call(
                BridgeContract.Visitor.parseExperienceAnswer, .string(text), .string(apiVersion.rawValue))
        } catch JavaScriptError.exception(let exception) {
            throw .invalid(exception.message)
        } catch JavaScriptError.engineClosed {
            throw .notInitialized
        } catch {
            throw .invalid("\(error)")
        }
        guard let json = result.stringValue, let value = try? JSONValue(jsonText: json),
            let profile = value["profile"], let selections = value["selectedOptimizations"]?.arrayValue,
            let changes = value["changes"]?.arrayValue, let selected = try? SelectedOptimizations(selections)
        else {
            throw .invalid("the engine returned an unreadable answer")
        }
        return ExperienceAnswer(
            profile: profile, selectedOptimizations: selected, changes: changes,
            ignoredChanges: value["ignoredChanges"]?.numberValue?.intValue ?? 0)
    }
}
