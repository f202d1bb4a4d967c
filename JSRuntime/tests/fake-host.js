// tests/fake-host.js
// Contract: installs deterministic fake host bindings on globalThis, replacing whatever is there,
// and the control object `globalThis.__testHost`. Evaluate it BEFORE the manifest files. Plain
// script, no Node APIs (it runs in JavaScriptCore too).
//   __nativeLog(level, message)          appends {level, message} to __testHost.logs
//   __nativeNow()                        manual clock, starts at Date.UTC(2026, 0, 1)
//   __nativeSetTimeout(id, ms) / __nativeClearTimeout(id)   manual timer queue
//   __nativeRandomUUID()                 "00000000-0000-4000-8000-000000000001", …002, … (v4-shaped)
//   __nativeSettle(requestId, ok, json, code)  appends {requestId, ok, json} to
//                                        __testHost.settled, with `code` when it is a string
//   __nativeInsightsAccept(eventJSON) / __nativeInsightsProfile(profileJSON | null) /
//   __nativeInsightsPurge()              a fake of the Swift host's Insights queue, recorded in
//                                        __testHost.insights: `accepted` ([{event (parsed),
//                                        profile (the one last told, or null)}], every event ever
//                                        accepted), `queued` (the events accepted since the last
//                                        purge; accept returns its length), `profiles` (every
//                                        profile told, parsed, null included) and `purges` (a
//                                        count). When `failAccept` is a string, accept throws an
//                                        Error with that message (a durable store that failed) and
//                                        records nothing.
//   __nativeExperienceAccept(eventJSON, profileId | null) / __nativeExperiencePurge()
//                                        a fake of the Swift host's Experience queue
//                                        (bridge/experience-link.js), recorded in
//                                        __testHost.experience: `accepted` ([{event (parsed),
//                                        profileId}], every event handed over), `queued` ([{ticket,
//                                        event, profileId, awaited}], the events waiting), `answers`
//                                        (every report passed to __bridge.experienceAnswered,
//                                        parsed) and `purges` (a count). Accept queues the event
//                                        under a fresh ticket and answers it when `online` is true
//                                        (the sender waits; one flight is scheduled on a microtask),
//                                        0 when offline, -1 once a flight disabled delivery. When
//                                        `acceptAnswer` is not null, accept records the event, queues
//                                        nothing and answers `acceptAnswer` (a function: its result
//                                        for (event, profileId)). When `failAccept` is a string, accept
//                                        throws an Error with that message and records nothing. Purge
//                                        empties `queued` and answers the JSON array of its awaited
//                                        tickets. No backoff, circuit, cap or outbox: those are Swift's.
// __testHost: logs, fetches, settled, insights, experience, now(), advance(ms) (moves the clock, firing due timers in
// time order — equal times in scheduling order — through __timerFired, including timers that
// callbacks schedule within the window), pendingTimers() (sorted [{id, due}]),
// fetchHandler (answers the fake Experience deliveries), reset() (clock, timers, logs, fetches, settled, insights, experience, uuid counter, handler), and for
// the delivery specs: fetchesTo(api) (the requests of the fake Experience deliveries to
// "experience" — a /profiles URL — or to
// anything else, e.g. "insights": JavaScript sends no Insights request, the specs check none
// leaves), eventsOf(fetch) (the events of an Experience `{events}` body), drainJobs() (a promise
// that lets every pending promise job, scheduled flights included, run) and
// runExperienceFlight() (one flight of the fake Experience queue, below); for the service specs:
// deliverExperience(answer, interpret) (the host's side of a pending Experience call, below) and
// statusKinds (the host's delivery outcome of each HTTP status, as the Swift host hands it to
// `__service.configure`: 2xx success; 401, 403, 404 disable; any other 4xx but 408 and 429 drop;
// everything else retry).
(function () {
  'use strict';
  var START_TIME = Date.UTC(2026, 0, 1);

  // {fallback, statuses}: the statuses 100–599 whose kind is not the fallback's.
  function hostStatusKinds() {
    var statuses = {};
    for (var status = 100; status <= 599; status++) {
      if (status >= 200 && status <= 299) statuses[String(status)] = 'success';
      else if (status === 401 || status === 403 || status === 404) statuses[String(status)] = 'disable';
      else if (status >= 400 && status <= 499 && status !== 408 && status !== 429) statuses[String(status)] = 'drop';
    }
    return Object.freeze({ fallback: 'retry', statuses: Object.freeze(statuses) });
  }

  var testHost = {
    START_TIME: START_TIME,
    statusKinds: hostStatusKinds(),
    logs: [],
    fetches: [],
    settled: [],
    fetchHandler: null,
    _clock: START_TIME,
    _timers: [],
    _sequence: 0,
    _uuidCounter: 0,
    insights: null,
    experience: null,
  };

  function freshInsights() {
    return { accepted: [], queued: [], profiles: [], purges: 0, failAccept: null };
  }
  testHost.insights = freshInsights();

  function freshExperience() {
    return {
      accepted: [], queued: [], answers: [], purges: 0, online: false, acceptAnswer: null, failAccept: null,
      disabled: false, lastTicket: 0, flightScheduled: false,
    };
  }
  testHost.experience = freshExperience();

  testHost.now = function () {
    return testHost._clock;
  };

  testHost.pendingTimers = function () {
    return testHost._timers.slice().sort(compareTimers).map(function (t) {
      return { id: t.id, due: t.due };
    });
  };

  function compareTimers(a, b) {
    return a.due - b.due || a.sequence - b.sequence;
  }

  testHost.advance = function (ms) {
    var target = testHost._clock + ms;
    for (;;) {
      var due = testHost._timers.filter(function (t) { return t.due <= target; }).sort(compareTimers);
      if (due.length === 0) break;
      var next = due[0];
      testHost._timers.splice(testHost._timers.indexOf(next), 1);
      if (next.due > testHost._clock) testHost._clock = next.due;
      globalThis.__timerFired(next.id);
    }
    testHost._clock = target;
  };

  testHost.fetchesTo = function (api) {
    return testHost.fetches.filter(function (request) {
      return (request.url.indexOf('/profiles') !== -1) === (api === 'experience');
    });
  };

  testHost.eventsOf = function (request) {
    return JSON.parse(request.body).events;
  };

  function bodyText(body) {
    return typeof body === 'string' ? body : body === undefined ? '' : JSON.stringify(body);
  }

  // A built Experience request {url, method, headers, body} "sent" the way a Swift host sends it:
  // appended to `fetches` (requestId "experience-<n>") and answered by `fetchHandler` like a
  // fetch: {status, headers, body (a string, or an object sent as JSON)}, {error} (or a throw) a
  // transport failure. Returns the handler's reply, undefined when there is none.
  function sendExperience(sent) {
    var request = { url: sent.url, method: sent.method, headers: sent.headers, body: sent.body, requestId: 'experience-' + (testHost.fetches.length + 1) };
    testHost.fetches.push(request);
    if (typeof testHost.fetchHandler !== 'function') return undefined;
    try {
      var reply = testHost.fetchHandler(request);
      return reply === null ? undefined : reply;
    } catch (error) {
      return { error: String(error && error.message ? error.message : error) };
    }
  }

  // The Swift service host's Experience delivery, faked: a service call's answer that carries
  // an `experienceRequest` has it sent (sendExperience; no reply is the budget running out) and
  // the answer handed to `interpret(context, status, headers, bodyText, failure)`, whose result
  // it returns. Any other answer is returned as it is.
  testHost.deliverExperience = function (answer, interpret) {
    if (answer === null || typeof answer !== 'object' || answer.experienceRequest === undefined) return answer;
    var reply = sendExperience(answer.experienceRequest);
    if (reply === undefined) return interpret(answer.context, 0, null, '', 'timeout');
    if (reply.error !== undefined) return interpret(answer.context, 0, null, String(reply.error), 'transport');
    return interpret(answer.context, reply.status, reply.headers || {}, bodyText(reply.body), null);
  };

  // The Swift client host's Experience queue (ExperienceQueue), faked: one flight carrying every
  // queued event, as the host runs it: `__bridge.experienceRequest(events)`, the request sent
  // (sendExperience; no reply is a timeout), the answer classified by `statusKinds` (success:
  // delivered; disable: disabled, every queued event discarded, every waiting sender settled,
  // later accepts refused; drop: dropped; retry, or no answer, retrying: the
  // events stay queued for the test's next flight), delivered and dropped events removed, and the
  // report handed to `__bridge.experienceAnswered` with the tickets of the flight's waiting
  // senders ("stale", no tickets, when a purge happened meanwhile, e.g. inside fetchHandler).
  // Returns the report; null when nothing is queued or delivery is disabled.
  testHost.runExperienceFlight = function () {
    var experience = testHost.experience;
    if (experience.queued.length === 0 || experience.disabled) return null;
    var flight = experience.queued.slice();
    var purges = experience.purges;
    var built = null;
    try {
      built = JSON.parse(globalThis.__bridge.experienceRequest(JSON.stringify(flight.map(function (queued) { return queued.event; }))));
    } catch (error) {
      built = null;
    }
    var reply = built === null ? { error: 'the request could not be built' } : sendExperience(built);
    if (reply === undefined) reply = { error: 'request timed out (no fetchHandler reply)', timedOut: true };
    var failure = reply.error !== undefined ? String(reply.error) : undefined;
    var status = failure !== undefined ? 0 : reply.status === undefined ? 200 : reply.status;
    var kind = testHost.statusKinds.statuses[String(status)] || testHost.statusKinds.fallback;
    var disposition = purges !== experience.purges ? 'stale'
      : failure !== undefined ? 'retrying'
        : { success: 'delivered', disable: 'disabled', drop: 'dropped', retry: 'retrying' }[kind];
    var settled = disposition === 'disabled' ? experience.queued : disposition === 'stale' ? [] : flight;
    var tickets = settled.filter(function (queued) { return queued.awaited; }).map(function (queued) {
      queued.awaited = false;
      return queued.ticket;
    });
    if (disposition === 'disabled') {
      experience.disabled = true;
      experience.queued = [];
    } else if (disposition === 'delivered' || disposition === 'dropped') {
      experience.queued = experience.queued.filter(function (queued) { return flight.indexOf(queued) === -1; });
    }
    var answer = {
      disposition: disposition, tickets: tickets, status: status,
      reason: disposition === 'delivered' || disposition === 'stale' ? ''
        : failure !== undefined ? 'Experience API request failed: ' + failure : 'Experience API answered ' + status,
    };
    if (failure !== undefined) {
      answer.failure = failure;
      // As Swift's queue does: a timeout is said by the transport's error, never by its text.
      if (reply.timedOut === true) answer.timedOut = true;
    } else {
      answer.headers = reply.headers || {};
      answer.body = bodyText(reply.body);
    }
    experience.answers.push(answer);
    globalThis.__bridge.experienceAnswered(JSON.stringify(answer));
    return answer;
  };

  testHost.drainJobs = function () {
    var chain = Promise.resolve();
    for (var i = 0; i < 200; i++) chain = chain.then(function () {});
    return chain;
  };

  // Also re-installs every fake binding (a test may have swapped one) and removes the optional
  // push-back callbacks a test may have installed.
  testHost.reset = function () {
    installBindings();
    delete globalThis.__nativeOnStateChange;
    testHost.logs = [];
    testHost.fetches = [];
    testHost.settled = [];
    testHost.fetchHandler = null;
    testHost._clock = START_TIME;
    testHost._timers = [];
    testHost._sequence = 0;
    testHost._uuidCounter = 0;
    testHost.insights = freshInsights();
    testHost.experience = freshExperience();
  };

  // The host's side of an async bridge function that returns its outcome (`[ok, value,
  // emitted?]` JSON text, bridge/bridge-shared.js settleReturning): wraps `object[name]` so that
  // the returned events reach __nativeOnEventEmitted and the outcome __nativeSettle, as the Swift
  // host publishes and settles them. Keeps the function's arity. Called by harness.js.
  testHost.receiveReturnedOutcomes = function (object, names) {
    names.forEach(function (name) {
      var original = object[name];
      if (typeof original !== 'function' || original.__receivesReturnedOutcome) return;
      var receive = function (args) {
        var returned = original.apply(object, args);
        if (typeof returned !== 'string') return returned;
        var outcome = JSON.parse(returned);
        (outcome[2] || []).forEach(function (event) {
          if (typeof globalThis.__nativeOnEventEmitted === 'function') globalThis.__nativeOnEventEmitted(JSON.stringify(event));
        });
        // The request id is the last string argument (an event call may end with its time, a number).
        var requestId;
        for (var i = args.length - 1; i >= 0 && requestId === undefined; i--) if (typeof args[i] === 'string') requestId = args[i];
        globalThis.__nativeSettle(requestId, outcome[0], outcome[0] ? JSON.stringify(outcome[1]) : outcome[1], outcome[3]);
        return returned;
      };
      var wrapped = original.length === 4 ? function (a, b, c, d) { return receive([a, b, c, d]); }
        : original.length === 3 ? function (a, b, c) { return receive([a, b, c]); }
          : function (a, b) { return receive([a, b]); };
      wrapped.__receivesReturnedOutcome = true;
      wrapped.original = original;
      object[name] = wrapped;
    });
  };

  globalThis.__testHost = testHost;

  function installBindings() {
    globalThis.__nativeLog = function (level, message) {
      testHost.logs.push({ level: level, message: message });
    };

    globalThis.__nativeNow = function () {
      return testHost._clock;
    };

    globalThis.__nativeSetTimeout = function (id, delayMs) {
      testHost._timers.push({ id: id, due: testHost._clock + delayMs, sequence: testHost._sequence++ });
    };

    globalThis.__nativeClearTimeout = function (id) {
      testHost._timers = testHost._timers.filter(function (t) { return t.id !== id; });
    };

    globalThis.__nativeRandomUUID = function () {
      testHost._uuidCounter += 1;
      var suffix = String(testHost._uuidCounter.toString(16));
      while (suffix.length < 12) suffix = '0' + suffix;
      return '00000000-0000-4000-8000-' + suffix;
    };

    globalThis.__nativeSettle = function (requestId, ok, json, code) {
      var settled = { requestId: requestId, ok: ok, json: json };
      if (typeof code === 'string') settled.code = code;
      testHost.settled.push(settled);
    };

    // The Swift host's Insights queue (bridge/insights-link.js), faked: it records, never sends.
    globalThis.__nativeInsightsAccept = function (eventJSON) {
      var insights = testHost.insights;
      if (typeof insights.failAccept === 'string') throw new Error(insights.failAccept);
      var told = insights.profiles.length > 0 ? insights.profiles[insights.profiles.length - 1] : null;
      var event = JSON.parse(eventJSON);
      insights.accepted.push({ event: event, profile: told });
      insights.queued.push(event);
      return insights.queued.length;
    };

    globalThis.__nativeInsightsProfile = function (profileJSON) {
      testHost.insights.profiles.push(profileJSON === null ? null : JSON.parse(profileJSON));
    };

    globalThis.__nativeInsightsPurge = function () {
      testHost.insights.purges += 1;
      testHost.insights.queued = [];
    };

    // The Swift host's Experience queue (bridge/experience-link.js), faked: flights run through
    // runExperienceFlight, one scheduled on a microtask per accept while online.
    globalThis.__nativeExperienceAccept = function (eventJSON, profileId) {
      var experience = testHost.experience;
      if (typeof experience.failAccept === 'string') throw new Error(experience.failAccept);
      var event = JSON.parse(eventJSON);
      experience.accepted.push({ event: event, profileId: profileId });
      if (experience.acceptAnswer !== null) {
        return typeof experience.acceptAnswer === 'function' ? experience.acceptAnswer(event, profileId) : experience.acceptAnswer;
      }
      if (experience.disabled) return -1;
      experience.lastTicket += 1;
      experience.queued.push({ ticket: experience.lastTicket, event: event, profileId: profileId, awaited: experience.online });
      if (!experience.online) return 0;
      if (!experience.flightScheduled) {
        experience.flightScheduled = true;
        Promise.resolve().then(function () {
          experience.flightScheduled = false;
          if (testHost.experience === experience) testHost.runExperienceFlight();
        });
      }
      return experience.lastTicket;
    };

    globalThis.__nativeExperiencePurge = function () {
      var experience = testHost.experience;
      var released = experience.queued.filter(function (queued) { return queued.awaited; }).map(function (queued) { return queued.ticket; });
      experience.purges += 1;
      experience.queued = [];
      return JSON.stringify(released);
    };
  }

  installBindings();
})();
