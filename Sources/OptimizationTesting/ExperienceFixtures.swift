// The response data the local API server returns by default: realistic Experience API `data`
// objects (`{profile, experiences, changes}`) written for this project (the same visitors
// as Fixtures/selections/new-visitor.json and identified-visitor.json). The server replaces
// `profile.id`/`profile.stableId` with the requested or created profile id.

extension LocalOptimizationAPIServer {
    /// The profile id the server knows from the start. It answers with the
    /// new-visitor data.
    public static let fixtureProfileID = "f0837a67eed5f1c93978f6d53fa948df93897137bcd048366f30ba590420754b"

    /// `data` for a visitor without an identify event: one audience, four selections (a sticky
    /// one, a baseline one, an inline-variable-only one) and one `Variable` change.
    public static let defaultNewVisitorData: JSONValue = parseFixture(newVisitorText)

    /// `data` for an identified visitor: more audiences, traits, different selections and change.
    public static let defaultIdentifiedVisitorData: JSONValue = parseFixture(identifiedVisitorText)

    private static func parseFixture(_ text: String) -> JSONValue {
        // The literals below are valid JSON; a test pins that they parse to objects.
        (try? JSONValue(jsonText: text)) ?? .object([:])
    }

    private static let newVisitorText = #"""
        {
          "profile": {
            "id": "",
            "stableId": "",
            "random": 0.4172093856,
            "audiences": ["7MdKq3XcVb0NwRf5TyJh8G"],
            "traits": {},
            "location": {
              "coordinates": {"latitude": 48.13743, "longitude": 11.57549},
              "city": "Munich", "postalCode": "80331", "region": "Bavaria", "regionCode": "BY",
              "country": "Germany", "countryCode": "DE", "continent": "EU", "timezone": "Europe/Berlin"
            },
            "session": {
              "id": "5f0c2a8e-93b1-4d67-a2e4-0c7b9d13f58a",
              "isReturningVisitor": false,
              "landingPage": {
                "path": "/spring", "query": {"utm_source": "newsletter"}, "referrer": "",
                "search": "?utm_source=newsletter", "url": "https://shop.example.com/spring?utm_source=newsletter"
              },
              "count": 1, "activeSessionLength": 12, "averageSessionLength": 12
            }
          },
          "experiences": [
            {"experienceId": "4HsYb1VmKr6PfQz9LdXe3T", "variantIndex": 1,
             "variants": {"3kPfV7sQy1ZcN0aRbW4xLm": "5pNs7JcXq2LmRb9VtKw1Hz"}, "sticky": true},
            {"experienceId": "3YtMb8QwRn5JcLx1VkHd0S", "variantIndex": 1,
             "variants": {"5RkWq2TnLc8YbVh0MxJf3D": "7CxLm0HtRe3WqJv5BnYs8K"}},
            {"experienceId": "6NvXe1KsBq4TzHm7WcRy2F", "variantIndex": 0,
             "variants": {"2GdNs6VbQy1KzRw9PcXt4M": "2GdNs6VbQy1KzRw9PcXt4M"}},
            {"experienceId": "expInlineOnly", "variantIndex": 1, "variants": {}}
          ],
          "changes": [
            {"key": "free-shipping-threshold", "type": "Variable", "value": 50,
             "meta": {"experienceId": "expInlineOnly", "variantIndex": 1}}
          ]
        }
        """#

    private static let identifiedVisitorText = #"""
        {
          "profile": {
            "id": "",
            "stableId": "",
            "random": 0.8826145537,
            "audiences": ["7MdKq3XcVb0NwRf5TyJh8G", "1RzUe9KqPb3mWc7NtYh2Fd", "5BvCx6ZaSd7FgHj8KlQw9E"],
            "traits": {"loyaltyTier": "gold", "newsletter": true, "ordersPlaced": 4},
            "location": {
              "coordinates": {"latitude": 59.33459, "longitude": 18.06324},
              "city": "Stockholm", "postalCode": "111 52", "region": "Stockholm County",
              "country": "Sweden", "countryCode": "SE", "continent": "EU", "timezone": "Europe/Stockholm"
            },
            "session": {
              "id": "c71e4b09-2d5a-4f83-9b6e-a18f02d7c3e5",
              "isReturningVisitor": true,
              "landingPage": {
                "path": "/", "query": {}, "referrer": "https://search.example.org/", "search": "",
                "url": "https://shop.example.com/", "title": "Trail Outfitters"
              },
              "count": 7, "activeSessionLength": 340, "averageSessionLength": 512
            }
          },
          "experiences": [
            {"experienceId": "4HsYb1VmKr6PfQz9LdXe3T", "variantIndex": 1,
             "variants": {"3kPfV7sQy1ZcN0aRbW4xLm": "5pNs7JcXq2LmRb9VtKw1Hz"}, "sticky": true},
            {"experienceId": "6TgHn2JdQw8rYv5XkLc0Bs", "variantIndex": 1,
             "variants": {"3kPfV7sQy1ZcN0aRbW4xLm": "2xWcL5nRg8HtVq0JpZs4Ke"}, "sticky": false},
            {"experienceId": "6NvXe1KsBq4TzHm7WcRy2F", "variantIndex": 1,
             "variants": {"2GdNs6VbQy1KzRw9PcXt4M": "0HfPz4KcWn7SdXq2LmTr6V"}, "sticky": false},
            {"experienceId": "expInlineOnly", "variantIndex": 2, "variants": {}, "sticky": false}
          ],
          "changes": [
            {"key": "free-shipping-threshold", "type": "Variable", "value": 0,
             "meta": {"experienceId": "expInlineOnly", "variantIndex": 2}}
          ]
        }
        """#
}
