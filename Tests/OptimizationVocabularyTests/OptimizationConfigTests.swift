import Logging
import OptimizationVocabulary
import OptimizationEngine
import OptimizationJSON
import OptimizationTesting
import Testing

/// What both faces derive from their configuration: the tenant every engine carries, where the
/// APIs are, what reaches the engine of the starting state, and the HTTP transport.
@Suite struct OptimizationConfigTests {
    @Test func theTenantCarriesTheEnvironmentOnlyWhenOneIsSet() {
        var config = OptimizationConfig(spaceId: "space-1")
        #expect(config.clientId == "space-1")
        #expect(config.tenantMembers == ["clientId": "space-1", "apiVersion": "v2"])
        config.environment = ""
        #expect(config.tenantMembers["environment"] == nil)
        config.environment = "staging"
        #expect(config.tenantMembers == ["clientId": "space-1", "apiVersion": "v2", "environment": "staging"])
    }

    @Test func emptyBaseURLsMeanTheDefaultAPIs() {
        let api = OptimizationAPIConfig(experienceBaseURL: "", insightsBaseURL: "")
        #expect(api.effectiveExperienceBaseURL == OptimizationAPIConfig.defaultExperienceBaseURL)
        #expect(api.effectiveInsightsBaseURL == OptimizationAPIConfig.defaultInsightsBaseURL)
        #expect(api.bridgeValue == nil, "nothing set: the engine gets no api object")
        let custom = OptimizationAPIConfig(experienceBaseURL: "http://127.0.0.1:9/experience/", enabledFeatures: ["location"], preflight: true)
        #expect(custom.bridgeValue == [
            "experienceBaseUrl": "http://127.0.0.1:9/experience/", "enabledFeatures": ["location"], "preflight": true,
        ])
    }

    @Test func insightsEventsGoToTheTenantsEnvironmentUnderTheConfiguredBase() {
        var config = OptimizationConfig(spaceId: "space 1", api: OptimizationAPIConfig(insightsBaseURL: "http://127.0.0.1:9/insights//"))
        #expect(config.insightsEventsURL == "http://127.0.0.1:9/insights/v2/spaces/space%201/environments/master/events")
        config.environment = "staging"
        #expect(config.insightsEventsURL == "http://127.0.0.1:9/insights/v2/spaces/space%201/environments/staging/events")
    }

    @Test func theStartingStateSendsOnlyWhatIsSetUnderItsWireNames() {
        #expect(StorageDefaults().bridgeValue == [:])
        let defaults = StorageDefaults(consent: true, selectedOptimizations: [])
        #expect(defaults.bridgeValue == ["consent": true, "selectedOptimizations": []])
    }

    @Test func anUnusableBaseURLIsAConfigurationError() {
        let api = OptimizationAPIConfig(experienceBaseURL: "not a url")
        #expect(throws: OptimizationError.self) {
            _ = try api.makeTransport(logger: Logger(label: "test"))
        }
    }

    @Test func anUnsetEnvironmentIsLoggedOnceWithoutVisitorData() {
        let recorder = LogRecorder()
        OptimizationConfig(spaceId: "space-1").warnWhenEnvironmentIsUnset(recorder.logger)
        OptimizationConfig(spaceId: "space-1", environment: "staging").warnWhenEnvironmentIsUnset(recorder.logger)
        let warnings = recorder.all.filter { $0.level == .warning }
        #expect(warnings.count == 1)
        #expect(warnings.first?.metadata["environment"] == "master")
        #expect(warnings.first?.metadata["apiVersion"] == "v2")
    }
}
