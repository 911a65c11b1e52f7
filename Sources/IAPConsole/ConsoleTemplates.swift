/// The console's pages, as Mustache templates embedded in the code (no files to ship). Only `{{ }}`
/// is used, which escapes `< > & " '`: every value is text, in an element or a quoted attribute.
/// Links are built in Swift as console paths (`ConsolePaths`), never taken from data.
enum ConsoleTemplates {
    static let all: [String: String] = [
        "layout": layout, "login": login, "overview": overview, "business": business, "search": search, "ticket": ticket, "user": user,
        "message": message, "held": held, "dead": dead, "deadPreview": deadPreview, "purchase": purchase, "lookup": lookup, "audit": audit, "deadEntries": deadEntries,
    ]

    static let layout = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
        <title>{{title}} · iap console</title><link rel="stylesheet" href="/console.css"><script src="/console.js" defer></script></head>
        <body><header><a class="home" href="/">iap console</a>
        {{#user}}<nav>{{#pipeline}}<a href="/">Overview</a> <a href="/held">Held</a> <a href="/dead">Dead letters</a> <a href="/audit">Audit</a> {{/pipeline}}{{#business}}<a href="/business">Business</a>{{/business}}</nav>
        {{#pipeline}}<form class="search" method="get" action="/search"><input name="q" value="{{query}}" placeholder="ticket, transaction, order or user id" aria-label="search" size="40"> <button>Search</button></form>{{/pipeline}}
        <span class="who">{{name}} ({{role}})</span> <form class="out" method="post" action="/logout"><button>Sign out</button></form>{{/user}}
        </header><main><h1>{{title}}</h1>{{$body}}{{/body}}
        {{#iapctl}}<p class="cli">The same in a terminal: <code>{{iapctl}}</code></p>{{/iapctl}}</main></body></html>
        """

    static let login = """
        {{<layout}}{{$body}}
        {{#error}}<p class="error" role="alert">{{error}}</p>{{/error}}
        <form method="post" action="/login" class="login">
        <label>Name <input name="username" autocomplete="username" required value="{{username}}"></label>
        <label>Password <input name="password" type="password" autocomplete="current-password" required></label>
        <button>Sign in</button></form>
        {{/body}}{{/layout}}
        """

    static let overview = """
        {{<layout}}{{$body}}
        <table class="stages"><thead><tr><th>stage</th><th>queued</th><th>in flight</th><th>oldest</th><th>workers</th></tr></thead><tbody>
        {{#stages}}<tr data-stage="{{name}}"><td>{{name}}</td><td class="n" data-field="queued">{{queued}}</td><td class="n" data-field="inflight">{{inflight}}</td><td class="n" data-field="oldest">{{oldest}}</td><td class="n" data-field="workers">{{workers}}</td></tr>{{/stages}}
        </tbody></table>
        <dl class="counts">{{#counts}}<dt>{{label}}</dt><dd data-count="{{key}}">{{value}}</dd>{{/counts}}</dl>
        {{#breakers}}<p class="{{class}}">Apple breaker {{name}}: {{state}}, {{failures}} failures{{#last}}, last: {{last}}{{/last}}</p>{{/breakers}}
        {{#apple}}<p class="{{class}}">{{text}}</p>{{/apple}}
        {{#sweeps}}<p class="quiet">{{text}}</p>{{/sweeps}}
        <h2>The last hour</h2>
        {{#hasHistory}}{{#history}}<section class="chart" data-series="{{key}}"><h3>{{title}}: {{latest}} at the last sample, at most {{peak}}</h3>
        <svg class="bars" viewBox="0 0 {{width}} {{height}}" width="{{width}}" height="{{height}}" role="img" aria-label="{{summary}}">
        <line class="axis" x1="0" y1="{{height}}" x2="{{width}}" y2="{{height}}"></line>
        {{#bars}}<rect class="level" x="{{x}}" y="{{y}}" width="{{width}}" height="{{height}}"><title>{{label}}</title></rect>{{/bars}}
        </svg><p class="span"><span>{{first}} UTC</span> <span>{{last}} UTC</span></p></section>{{/history}}{{/hasHistory}}
        {{^hasHistory}}<p class="quiet">No samples yet: the intakes keep one a minute.</p>{{/hasHistory}}
        <p class="asof" data-asof>as of {{asOf}}</p>
        {{/body}}{{/layout}}
        """

    static let business = """
        {{<layout}}{{$body}}
        <p class="choices">{{#windows}}{{#current}}<strong>{{label}}</strong>{{/current}}{{^current}}<a href="{{href}}">{{label}}</a>{{/current}} {{/windows}}
        · {{#environments}}{{#current}}<strong>{{label}}</strong>{{/current}}{{^current}}<a href="{{href}}">{{label}}</a>{{/current}} {{/environments}}</p>
        <p class="quiet">{{from}} to {{to}} (UTC days). {{note}}{{#hasUnpriced}} {{unpriced}} purchases had no price (legacy receipts): counted, in no money.{{/hasUnpriced}}</p>
        {{#charts}}<section class="chart" data-currency="{{currency}}"><h2>{{currency}}: gross {{gross}}, refunds {{refunds}}, net {{net}}</h2>
        <p class="quiet">{{purchases}} purchases, {{refundCount}} refunds. Bars: gross per day, refunds in front; the tallest is {{peak}}.</p>
        <svg class="bars" viewBox="0 0 {{width}} {{height}}" width="{{width}}" height="{{height}}" role="img" aria-label="{{summary}}">
        <line class="axis" x1="0" y1="{{height}}" x2="{{width}}" y2="{{height}}"></line>
        {{#bars}}<rect class="gross" x="{{x}}" y="{{grossY}}" width="{{width}}" height="{{grossHeight}}"><title>{{label}}</title></rect><rect class="refunds" x="{{x}}" y="{{refundsY}}" width="{{width}}" height="{{refundsHeight}}"><title>{{label}}</title></rect>{{/bars}}
        </svg><p class="span"><span>{{first}}</span> <span>{{last}}</span></p></section>{{/charts}}
        {{^charts}}<p>No sales counted in this window.</p>{{/charts}}
        <h2>Subscribers</h2>
        {{#hasNow}}<table class="now"><thead><tr><th>now, in</th><th>subscribers</th><th>of them in a free trial</th><th>monthly recurring revenue (estimated)</th></tr></thead><tbody>
        {{#now}}<tr data-currency="{{currency}}"><td>{{currency}}</td><td class="n">{{active}}</td><td class="n">{{trials}}</td><td class="n">{{mrr}}</td></tr>{{/now}}
        </tbody></table>{{/hasNow}}{{^hasNow}}<p>No subscribers now.</p>{{/hasNow}}
        <dl class="counts">{{#subscriptions}}<dt>{{label}}</dt><dd data-count="{{key}}">{{value}}</dd>{{/subscriptions}}</dl>
        {{#hasChurn}}<table class="churn"><thead><tr><th>expired because</th><th>subscriptions</th></tr></thead><tbody>{{#churn}}<tr><td>{{reason}}</td><td class="n">{{count}}</td></tr>{{/churn}}</tbody></table>{{/hasChurn}}
        {{#hasRetention}}<h2>Retention answers by rule</h2>
        <table class="retention"><thead><tr><th>rule</th><th>answered</th><th>stayed (a period bought after)</th><th>share</th></tr></thead><tbody>
        {{#retention}}<tr data-rule="{{rule}}"><td>{{rule}}</td><td class="n">{{answered}}</td><td class="n">{{saved}}</td><td class="n">{{share}}</td></tr>{{/retention}}
        </tbody></table>{{/hasRetention}}
        {{#hasRequests}}<h2>Refund requests</h2>
        <table class="requests"><thead><tr><th>the customer’s reason</th><th>requests</th><th>Apple refunded</th><th>Apple declined</th></tr></thead><tbody>
        {{#requests}}<tr data-reason="{{reason}}"><td>{{reason}}</td><td class="n">{{requests}}</td><td class="n">{{refunded}}</td><td class="n">{{declined}}</td></tr>{{/requests}}
        </tbody></table>{{/hasRequests}}
        {{#hasAnswers}}<h2>Refund answers by rule</h2>
        <table class="answers"><thead><tr><th>rule</th><th>answered</th><th>Apple refunded</th><th>Apple declined</th></tr></thead><tbody>
        {{#answers}}<tr data-rule="{{rule}}"><td>{{rule}}</td><td class="n">{{answered}}</td><td class="n">{{refunded}}</td><td class="n">{{declined}}</td></tr>{{/answers}}
        </tbody></table>{{/hasAnswers}}
        <h2>Products with the most purchases</h2>
        {{#hasProducts}}<table class="top"><thead><tr><th>product</th><th>currency</th><th>purchases</th><th>gross</th><th>refunds</th><th>net</th></tr></thead><tbody>
        {{#products}}<tr><td>{{name}}</td><td>{{currency}}</td><td class="n">{{purchases}}</td><td class="n">{{gross}}</td><td class="n">{{refunds}}</td><td class="n">{{net}}</td></tr>{{/products}}
        </tbody></table>{{/hasProducts}}{{^hasProducts}}<p>None.</p>{{/hasProducts}}
        <h2>Storefronts with the most purchases</h2>
        {{#hasStorefronts}}<table class="top"><thead><tr><th>storefront</th><th>currency</th><th>purchases</th><th>gross</th><th>refunds</th><th>net</th></tr></thead><tbody>
        {{#storefronts}}<tr><td>{{name}}</td><td>{{currency}}</td><td class="n">{{purchases}}</td><td class="n">{{gross}}</td><td class="n">{{refunds}}</td><td class="n">{{net}}</td></tr>{{/storefronts}}
        </tbody></table>{{/hasStorefronts}}{{^hasStorefronts}}<p>None.</p>{{/hasStorefronts}}
        {{/body}}{{/layout}}
        """

    static let search = """
        {{<layout}}{{$body}}
        {{#results}}<p><a href="{{href}}">{{label}}</a> {{detail}}</p>{{/results}}
        {{^results}}<p>Nothing in the books for “{{query}}”. A ticket, transaction, original transaction or notification id, or a user id.</p>{{/results}}
        {{#lookups}}<p><a href="{{href}}">{{label}}</a> (asks Apple: it spends the Server API budget)</p>{{/lookups}}
        {{/body}}{{/layout}}
        """

    static let ticket = """
        {{<layout}}{{$body}}
        <dl class="fields">{{#fields}}<dt>{{name}}</dt><dd>{{value}}</dd>{{/fields}}</dl>
        {{#hasTransactions}}<table><thead><tr><th>transaction</th><th>original</th><th>product</th><th>qty</th><th>outcome</th><th>reason</th></tr></thead><tbody>
        {{#transactions}}<tr><td>{{transactionID}}</td><td>{{originalTransactionID}}</td><td>{{productID}}</td><td class="n">{{quantity}}</td><td>{{outcome}}{{#unitHref}} · <a href="{{unitHref}}">its story</a>{{/unitHref}}</td><td>{{reason}}</td></tr>{{/transactions}}
        </tbody></table>{{/hasTransactions}}
        {{#userHref}}<p><a href="{{userHref}}">the user’s record</a></p>{{/userHref}}
        {{/body}}{{/layout}}
        """

    static let user = """
        {{<layout}}{{$body}}
        <dl class="fields">{{#fields}}<dt>{{name}}</dt><dd>{{value}}</dd>{{/fields}}</dl>
        <h2>Purchases</h2>
        {{#hasPurchases}}<table><thead><tr><th>state</th><th>unit</th><th>product</th><th>qty</th><th>source</th><th>granted</th><th>reason</th></tr></thead><tbody>
        {{#purchases}}<tr><td>{{state}}</td><td><a href="{{unitHref}}">{{unit}}</a></td><td>{{product}}</td><td class="n">{{quantity}}</td><td>{{source}}</td><td>{{granted}}</td><td>{{reason}}</td></tr>{{/purchases}}
        </tbody></table>{{/hasPurchases}}{{^hasPurchases}}<p>None listed.</p>{{/hasPurchases}}
        {{#olderHref}}<p><a href="{{olderHref}}">older purchases</a></p>{{/olderHref}}
        <h2>Events</h2>
        {{#hasEvents}}<table class="events"><thead><tr><th>at</th><th>event</th><th>product</th><th>purchase</th><th>entry</th><th>webhook</th></tr></thead><tbody>
        {{#events}}<tr><td>{{at}}</td><td>{{event}}</td><td>{{product}}</td><td>{{#purchaseHref}}<a href="{{purchaseHref}}">{{purchase}}</a>{{/purchaseHref}}</td><td>{{entry}}</td><td>{{delivery}}</td></tr>{{/events}}
        </tbody></table>{{/hasEvents}}{{^hasEvents}}<p>None kept. Events are indexed as they are written (the newest 100 a user a bucket); those written before the index existed, by <code>iapctl user index-events</code>. <code>iapctl user show</code> reads the streams.</p>{{/hasEvents}}
        {{#olderEventsHref}}<p><a href="{{olderEventsHref}}">older events</a></p>{{/olderEventsHref}}
        <h2>Subscriptions</h2>
        {{#subscriptions}}<p>{{id}}: {{product}} {{status}}{{#expires}}, until {{expires}}{{/expires}}</p>{{/subscriptions}}{{^subscriptions}}<p>None.</p>{{/subscriptions}}
        <h2>Grants for a time</h2>
        {{#hasGrants}}<table class="grants"><thead><tr><th>grant</th><th>entitlement</th><th>until</th><th>state</th><th>reason</th><th>by</th>{{#canGrant}}<th></th>{{/canGrant}}</tr></thead><tbody>
        {{#grants}}<tr data-grant="{{id}}"><td>{{id}}</td><td>{{entitlement}}</td><td>{{until}}</td><td>{{state}}</td><td>{{reason}}</td><td>{{by}}</td>{{#canGrant}}<td>{{#endAction}}<form method="post" action="{{endAction}}" class="decide"><button>Take back</button></form>{{/endAction}}</td>{{/canGrant}}</tr>{{/grants}}
        </tbody></table>{{/hasGrants}}{{^hasGrants}}<p>None.</p>{{/hasGrants}}
        {{#canGrant}}<form method="post" action="{{grantAction}}" class="grant"><label>grant id <input name="grant_id" required maxlength="64" placeholder="a support case"></label>
        <label>entitlement <select name="entitlement">{{#entitlements}}<option>{{name}}</option>{{/entitlements}}</select></label>
        <label>days <input name="days" required inputmode="numeric" pattern="[0-9]+" value="7"></label>
        <label>reason <input name="reason" required maxlength="200"></label> <button>Grant</button></form>{{/canGrant}}
        {{/body}}{{/layout}}
        """

    static let held = """
        {{<layout}}{{$body}}
        {{#hasHeld}}<p>{{#first}}The oldest {{shown}} held purchases{{/first}}{{^first}}{{shown}} more held purchases{{/first}}, oldest first.</p>
        <table class="held"><thead><tr><th>held since</th><th>rule</th><th>evidence</th><th>user</th><th>product</th><th>qty</th><th>currency</th><th>source</th><th>ticket</th>{{#canDecide}}<th>decide</th>{{/canDecide}}</tr></thead><tbody>
        {{#held}}<tr><td>{{heldAt}}</td><td><a href="{{storyHref}}">{{reason}}</a></td><td class="evidence">{{#evidence}}{{line}}<br>{{/evidence}}</td><td><a href="{{userHref}}">{{user}}</a></td><td>{{product}}</td><td class="n">{{quantity}}</td><td>{{currency}}</td><td>{{source}}</td><td><a href="{{ticketHref}}">{{ticket}}</a></td>
        {{#canDecide}}<td><form method="post" action="{{releaseAction}}" class="decide"><input name="note" required maxlength="500" placeholder="why (required)" aria-label="note for the release"> <button>Release</button></form>
        <form method="post" action="{{rejectAction}}" class="decide"><input name="note" required maxlength="500" placeholder="why (required)" aria-label="note for the rejection"> <button>Reject</button></form></td>{{/canDecide}}</tr>{{/held}}
        </tbody></table>{{/hasHeld}}{{^hasHeld}}<p>Nothing is held.</p>{{/hasHeld}}
        {{#nextHref}}<p><a href="{{nextHref}}">the next held purchases</a></p>{{/nextHref}}
        {{/body}}{{/layout}}
        """

    static let dead = """
        {{<layout}}{{$body}}
        {{#buckets}}<a href="{{href}}">{{name}}</a> {{/buckets}}
        {{#hasLetters}}<p>{{from}}–{{to}} of {{total}}, newest first.</p>
        <dl class="counts">{{#groups}}<dt>{{group}}</dt><dd>{{count}} <a href="{{previewHref}}">preview a replay</a></dd>{{/groups}}</dl>
        <table class="dead"><thead><tr><th>when</th><th>stage</th><th>reason</th><th>attempts</th><th>error</th><th>ticket</th></tr></thead><tbody>
        {{#letters}}<tr><td>{{at}}</td><td>{{stage}}</td><td>{{reason}}</td><td class="n">{{attempts}}</td><td>{{error}}</td><td>{{#ticketHref}}<a href="{{ticketHref}}">{{ticket}}</a>{{/ticketHref}}</td></tr>{{/letters}}
        </tbody></table>{{/hasLetters}}{{^hasLetters}}<p>No dead letters.</p>{{/hasLetters}}
        <p>{{#newerHref}}<a href="{{newerHref}}">newer</a> {{/newerHref}}{{#olderHref}}<a href="{{olderHref}}">older</a>{{/olderHref}}</p>
        {{/body}}{{/layout}}
        """

    static let deadPreview = """
        {{<layout}}{{$body}}
        <p>A dry run: nothing changes until you confirm. Among entries {{from}}–{{to}} of bucket {{bucket}} ({{seen}} in all),
        these {{count}} are dead for this reason. A confirmation acts on exactly these, each once.</p>
        {{#hasLetters}}<table class="dead"><thead><tr><th>when</th><th>attempts</th><th>error</th><th>ticket</th></tr></thead><tbody>
        {{#letters}}<tr><td>{{at}}</td><td class="n">{{attempts}}</td><td>{{error}}</td><td>{{#ticketHref}}<a href="{{ticketHref}}">{{ticket}}</a>{{/ticketHref}}</td></tr>{{/letters}}
        </tbody></table>{{/hasLetters}}{{^hasLetters}}<p>None are left in this window.</p>{{/hasLetters}}
        {{#canReplay}}<form method="post" action="/dead/replay" class="confirm">{{> deadEntries}}<button>Replay these {{count}}</button></form>{{/canReplay}}
        {{#canPurge}}<form method="post" action="/dead/purge" class="confirm">{{> deadEntries}}<button>Delete these {{count}} for good</button></form>{{/canPurge}}
        <p><a href="{{backHref}}">back to the dead letters</a></p>
        {{/body}}{{/layout}}
        """

    /// The previewed entries, by digest, in a confirmation form.
    static let deadEntries = """
        <input type="hidden" name="bucket" value="{{bucket}}"><input type="hidden" name="start" value="{{start}}"><input type="hidden" name="seen" value="{{seen}}">{{#letters}}<input type="hidden" name="entry" value="{{digest}}">{{/letters}}
        """

    static let purchase = """
        {{<layout}}{{$body}}
        <ol class="timeline">{{#steps}}<li><span class="at">{{at}}</span> <strong>{{what}}</strong> {{detail}}{{#href}} · <a href="{{href}}">{{link}}</a>{{/href}}{{#next}}<br><span class="next">{{next}}</span>{{/next}}</li>{{/steps}}</ol>
        {{/body}}{{/layout}}
        """

    static let lookup = """
        {{<layout}}{{$body}}
        {{#error}}<p class="error" role="alert">{{error}} ({{code}})</p>{{/error}}
        {{#hasPurchases}}<table class="lookup"><thead><tr><th>transaction</th><th>original</th><th>product</th><th>environment</th><th>in the books</th><th>grant</th></tr></thead><tbody>
        {{#purchases}}<tr><td>{{transaction}}</td><td>{{original}}</td><td>{{product}}</td><td>{{environment}}</td><td>{{state}}{{#storyHref}} · <a href="{{storyHref}}">its story</a>{{/storyHref}}</td>
        <td>{{#grantable}}<form method="post" action="{{grantAction}}" class="decide"><input type="hidden" name="transaction" value="{{transaction}}"><input name="user" required maxlength="128" placeholder="the player's user id" aria-label="user id to grant to"> <button>Grant</button></form>{{/grantable}}</td></tr>{{/purchases}}
        </tbody></table>{{/hasPurchases}}
        {{/body}}{{/layout}}
        """

    static let audit = """
        {{<layout}}{{$body}}
        <p>Every console action, newest first: sign-ins, hold decisions, dead-letter replays and purges, look-ups at Apple and grants.</p>
        {{#hasEntries}}<table class="audit"><thead><tr><th>when</th><th>who</th><th>action</th><th>on</th><th>outcome</th></tr></thead><tbody>
        {{#entries}}<tr><td>{{at}}</td><td>{{user}}</td><td>{{action}}</td><td>{{target}}</td><td>{{outcome}}</td></tr>{{/entries}}
        </tbody></table>{{/hasEntries}}{{^hasEntries}}<p>Nothing yet.</p>{{/hasEntries}}
        {{#olderHref}}<p><a href="{{olderHref}}">older</a></p>{{/olderHref}}
        {{/body}}{{/layout}}
        """

    static let message = """
        {{<layout}}{{$body}}<p>{{text}}</p>{{#ticketHref}}<p><a href="{{ticketHref}}">ticket {{ticket}}</a></p>{{/ticketHref}}{{/body}}{{/layout}}
        """

    /// The console's one script: the overview's counters refreshed from its JSON twin every 5 s
    /// while the tab is visible (nothing else needs JavaScript). Values are set as text
    /// (`textContent`), never as markup; a failed read (signed out, Redis away) stops it and
    /// marks the page stale.
    static let script = """
        (function () {
          "use strict";
          var table = document.querySelector("table.stages");
          if (!table) return;
          var timer = null;
          function set(element, value) {
            if (element && element.textContent !== String(value)) element.textContent = String(value);
          }
          function stop() {
            if (timer) { clearInterval(timer); timer = null; }
          }
          function refresh() {
            fetch("/", { headers: { Accept: "application/json" }, credentials: "same-origin", redirect: "error" })
              .then(function (response) {
                if (!response.ok) throw new Error(String(response.status));
                return response.json();
              })
              .then(function (data) {
                (data.stages || []).forEach(function (stage) {
                  var row = table.querySelector('tr[data-stage="' + CSS.escape(String(stage.name)) + '"]');
                  if (!row) return;
                  ["queued", "inflight", "oldest", "workers"].forEach(function (field) {
                    set(row.querySelector('[data-field="' + field + '"]'), stage[field]);
                  });
                });
                (data.counts || []).forEach(function (count) {
                  set(document.querySelector('[data-count="' + CSS.escape(String(count.key)) + '"]'), count.value);
                });
                set(document.querySelector("[data-asof]"), "as of " + data.asOf);
              })
              .catch(function () {
                document.body.setAttribute("data-stale", "");
                stop();
              });
          }
          function start() {
            if (!timer) timer = setInterval(refresh, 5000);
          }
          document.addEventListener("visibilitychange", function () {
            if (document.visibilityState === "visible") { refresh(); start(); } else { stop(); }
          });
          if (document.visibilityState === "visible") start();
        })();
        """

    static let css = """
        body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d1d1f;background:#fafafa}
        header{display:flex;gap:1em;align-items:center;padding:.6em 1em;background:#1d1d1f;color:#fff}
        header a{color:#fff;text-decoration:none;font-weight:600}header form{display:inline;margin:0}
        header .who{margin-left:auto}main{padding:1em 1.5em;max-width:72em}h1{font-size:1.4em}
        table{border-collapse:collapse;margin:.5em 0}th,td{padding:.25em .7em;border-bottom:1px solid #ddd;text-align:left}
        td.n{text-align:right;font-variant-numeric:tabular-nums}dl.counts,dl.fields{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}
        dt{color:#666}.quiet{color:#666;margin:.2em 0}td.evidence{font-size:.9em;color:#444}.error{color:#b00020}.warn{color:#8a4b00}form.login{display:grid;gap:.6em;max-width:20em}
        header nav a{font-weight:400;margin-right:.8em}form.decide{display:inline-block;margin:0 .4em .2em 0}
        body[data-stale] .asof::after{content:" (no longer live: reload the page)";color:#b00020}ol.timeline{padding-left:1.2em}ol.timeline li{margin:.5em 0}.at{color:#666;font-variant-numeric:tabular-nums;display:inline-block;min-width:13em}
        svg.bars{display:block;background:#fff;border:1px solid #ddd;max-width:100%;height:auto}svg.bars rect.gross{fill:#7aa6d6}svg.bars rect.refunds{fill:#c0504d}svg.bars rect.level{fill:#7aa6d6}
        svg.bars line.axis{stroke:#999}p.span{display:flex;justify-content:space-between;max-width:720px;color:#666;margin:.2em 0 1em}section.chart h2{font-size:1.1em}
        .next{color:#0a5;margin-left:13.3em}p.cli{margin-top:2em;color:#666}p.cli code{background:#eee;padding:.1em .4em}form.confirm{display:inline-block;margin-right:1em}
        """
}
