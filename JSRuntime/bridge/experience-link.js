// bridge/experience-link.js
// Contract: `__optimization.createExperienceLink(options)` → the client's Experience path:
// the event emitter's `experienceQueue` ({send(event)}), backed by the Swift host, which queues
// and sends (Swift `ExperienceQueue`: order, one upsert at a time, backoff, circuit,
// Retry-After, 401/403/404 disabling, the durable outbox). JavaScript builds and gates the
// event, builds each upsert and says what each answer means; it never queues.
// Options:
//   api                  the Experience API client (core/experience-api.js)
//   getProfileId()       the upsert's profile id (stored beside the event for erasure)
//   applyData(data)      applies a successful answer's data to the visitor's state
//   setRequestState(s)   experienceRequestState: {status: "pending"} when a request is built,
//                        {status: "failed", reason: "timeout"|"api-error"} when it failed
// The link:
//   send(event) → result | Promise<result>   `__nativeExperienceAccept(eventJSON, profileId|null)`
//       answers a ticket (> 0: the sender waits for the answer of the flight that carries the
//       event), 0 (the event stays queued: offline, on disk only, a backoff wait, an open
//       circuit), -1 (delivery is disabled: refused), or JSON text {ticket, released} when the
//       queue's cap released earlier senders. Results: {accepted: true, data} (delivered, data
//       = the answer's data), {accepted: true} (queued), {accepted: true, refused: {status,
//       reason, code?}} (its batch was refused, or delivery is disabled). Throws when the host
//       could not take the event (its durable store failed): the event method rejects with an
//       Error of code `experienceEventNotStored` (core/settle.js ERROR_CODES) and the host's
//       message.
//   request(eventsJSON) → JSON text {url, method, headers, body}   the upsert carrying these
//       events (a JSON array); sets experienceRequestState pending.
//   answered(answer)     a flight ended: {disposition: "delivered"|"dropped"|"disabled"|
//       "retrying"|"stale", tickets, status, reason, headers?, body?, failure?, timedOut?};
//       settles the tickets' senders and applies a delivered answer. `timedOut: true` says the
//       transport's failure was a timeout (the request state's reason "timeout").
//   release(tickets)     these senders stop waiting: {accepted: true}.
//   purge()              `__nativeExperiencePurge()` → JSON array of released tickets (consent
//       withdrawn: the host discards every queued event).
// The host must register both natives before `__bridge.initialize`.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('bridge/experience-link.js', {
    provides: ['createExperienceLink'],
    uses: ['ERROR_CODES', 'apiResponse', 'codedError', 'guards', 'host', 'messageOf'],
  });
  var host = ns.host;
  var guards = ns.guards;
  var http = ns.apiResponse;

  var ACCEPTED = Object.freeze({ accepted: true });

  function createExperienceLink(options) {
    var api = options.api;
    var getProfileId = typeof options.getProfileId === 'function' ? options.getProfileId : function () { return undefined; };
    var applyData = typeof options.applyData === 'function' ? options.applyData : function () {};
    var setRequestState = typeof options.setRequestState === 'function' ? options.setRequestState : function () {};
    var waiters = new Map(); // ticket → resolve
    var disabledRefusal = null;

    function settle(tickets, result) {
      if (!Array.isArray(tickets)) return;
      tickets.forEach(function (ticket) {
        var resolve = waiters.get(ticket);
        if (resolve === undefined) return;
        waiters.delete(ticket);
        resolve(result);
      });
    }

    function refusal(status, reason, code) {
      var refused = { status: status, reason: reason };
      if (typeof code === 'string') refused.code = code;
      return { accepted: true, refused: refused };
    }

    function send(event) {
      var profileId = getProfileId();
      var eventJSON = JSON.stringify(event);
      var answer;
      try {
        answer = globalThis.__nativeExperienceAccept(eventJSON, typeof profileId === 'string' && profileId.length > 0 ? profileId : null);
      } catch (error) {
        throw ns.codedError(ns.ERROR_CODES.experienceEventNotStored, ns.messageOf(error));
      }
      var ticket = answer;
      if (typeof answer === 'string') {
        var parsed = JSON.parse(answer);
        ticket = parsed.ticket;
        settle(parsed.released, ACCEPTED);
      }
      if (ticket === -1) {
        return Promise.resolve(disabledRefusal !== null ? disabledRefusal : refusal(0, 'Experience API delivery is disabled.'));
      }
      if (typeof ticket !== 'number' || ticket <= 0) return ACCEPTED;
      return new Promise(function (resolve) {
        waiters.set(ticket, resolve);
      });
    }

    function request(eventsJSON) {
      var events = JSON.parse(eventsJSON);
      var built = api.profileUpsertRequest({ profileId: getProfileId(), events: events });
      setRequestState({ status: 'pending' });
      return JSON.stringify(built);
    }

    // The outcome of a 2xx answer: {ok: true, data, ignoredChanges} or {ok: false, reason}.
    function readAnswer(answer) {
      return api.profileAnswerOutcome(answer.status, guards.isRecord(answer.headers) ? answer.headers : {},
        typeof answer.body === 'string' ? answer.body : '');
    }

    function answered(answer) {
      var tickets = answer.tickets;
      switch (answer.disposition) {
        case 'delivered': {
          var outcome = readAnswer(answer);
          if (outcome.ok) {
            if (outcome.ignoredChanges > 0) {
              host.log('warn', 'Experience API response: ignored ' + outcome.ignoredChanges + ' change(s) of an unknown type.');
            }
            applyData(outcome.data);
            settle(tickets, { accepted: true, data: outcome.data });
          } else {
            setRequestState({ status: 'failed', reason: 'api-error' });
            host.log('error', outcome.reason + ' The event(s) reached the API and are not sent again.');
            settle(tickets, ACCEPTED);
          }
          return;
        }
        case 'dropped':
          setRequestState({ status: 'failed', reason: 'api-error' });
          settle(tickets, refusal(answer.status, answer.reason, http.errorCodeOf(answer.body || '')));
          return;
        case 'disabled':
          disabledRefusal = refusal(answer.status, answer.reason, http.errorCodeOf(answer.body || ''));
          setRequestState({ status: 'failed', reason: 'api-error' });
          settle(tickets, disabledRefusal);
          return;
        case 'retrying': {
          var timeout = answer.timedOut === true;
          setRequestState({ status: 'failed', reason: timeout ? 'timeout' : 'api-error' });
          settle(tickets, ACCEPTED);
          return;
        }
        default: {
          // Purged while in flight: nothing to settle; a successful answer still updates the state.
          var late = answer.status >= 200 && answer.status <= 299 ? readAnswer(answer) : null;
          if (late !== null && late.ok) applyData(late.data);
          else setRequestState({ status: 'failed', reason: 'api-error' });
          settle(tickets, ACCEPTED);
        }
      }
    }

    function release(tickets) {
      settle(tickets, ACCEPTED);
    }

    function purge() {
      var released = JSON.parse(globalThis.__nativeExperiencePurge());
      settle(released, ACCEPTED);
    }

    return { send: send, request: request, answered: answered, release: release, purge: purge };
  }

  ns.createExperienceLink = createExperienceLink;
})();
