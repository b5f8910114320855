/// The `fetch --report` page: one self-contained HTML file (no scripts, no external assets;
/// thumbnails are inline data URIs), rendered with swift-mustache, which escapes every value.
/// Sections of 500 images use `content-visibility: auto`, so a 10,000-image sheet lays out
/// only what is on screen; images load lazily.
enum ReportTemplate {
    static let page = #"""
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>webimage fetch: {{succeeded}} of {{requested}} images</title>
    <style>
    body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #222; background: #fafafa; }
    h1 { font-size: 1.4rem; margin: 0 0 .25rem; } h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
    .when { color: #666; margin: 0 0 1rem; }
    dl.counts { display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; margin: 0; }
    dl.counts div { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: .4rem .8rem; }
    dt { color: #666; font-size: .8rem; } dd { margin: 0; font-size: 1.2rem; font-weight: 600; }
    svg { background: #fff; border: 1px solid #ddd; border-radius: 6px; max-width: 100%; height: auto; }
    svg text { font-size: 10px; fill: #555; }
    table { border-collapse: collapse; background: #fff; } td, th { border: 1px solid #ddd; padding: .25rem .5rem; text-align: left; vertical-align: top; }
    td.url { word-break: break-all; max-width: 40rem; }
    section.sheet { display: flex; flex-wrap: wrap; gap: .5rem; content-visibility: auto; contain-intrinsic-size: auto 1600px; margin-bottom: .5rem; }
    figure { margin: 0; width: {{cellWidth}}px; background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: .3rem; }
    figure img { display: block; margin: 0 auto; max-width: 100%; height: auto; }
    figure .none { height: {{thumbnailSide}}px; display: flex; align-items: center; justify-content: center; color: #999; }
    figcaption { font-size: .72rem; color: #444; overflow-wrap: anywhere; }
    .source-network { color: #0a58ca; } .source-disk { color: #198754; } .source-memory { color: #6f42c1; } .source-revalidated { color: #b8860b; }
    </style>
    </head>
    <body>
    <h1>webimage fetch</h1>
    <p class="when">{{generated}} · {{seconds}} s · {{rate}} images/s · {{totalBytes}}</p>
    <dl class="counts">
    <div><dt>requested</dt><dd id="count-requested">{{requested}}</dd></div>
    <div><dt>succeeded</dt><dd id="count-succeeded">{{succeeded}}</dd></div>
    <div><dt>failed</dt><dd id="count-failed">{{failed}}</dd></div>
    <div><dt>skipped</dt><dd id="count-skipped">{{skipped}}</dd></div>
    <div><dt>duplicates</dt><dd id="count-duplicates">{{duplicates}}</dd></div>
    <div><dt>network</dt><dd id="count-network">{{fromNetwork}}</dd></div>
    <div><dt>disk</dt><dd id="count-disk">{{fromDisk}}</dd></div>
    <div><dt>memory</dt><dd id="count-memory">{{fromMemory}}</dd></div>
    <div><dt>304</dt><dd id="count-revalidated">{{revalidated}}</dd></div>
    </dl>
    <h2>Throughput over time</h2>
    <svg id="throughput" viewBox="0 0 640 180" width="640" height="180" role="img" aria-label="images per second over the run">
    <line x1="40" y1="150" x2="630" y2="150" stroke="#999"/><line x1="40" y1="10" x2="40" y2="150" stroke="#999"/>
    <text x="4" y="14">{{throughputMax}}/s</text><text x="28" y="163">0</text><text x="600" y="163">{{seconds}} s</text>
    <polyline fill="none" stroke="#0a58ca" stroke-width="2" points="{{throughputPoints}}"/>
    </svg>
    <h2>Time per image</h2>
    <svg id="distribution" viewBox="0 0 640 180" width="640" height="180" role="img" aria-label="how long images took">
    <line x1="40" y1="150" x2="630" y2="150" stroke="#999"/>
    {{#histogram}}<rect x="{{x}}" y="{{y}}" width="{{width}}" height="{{height}}" fill="#6c9bd2"><title>{{label}}: {{count}}</title></rect><text x="{{x}}" y="165">{{label}}</text><text x="{{x}}" y="{{labelY}}">{{count}}</text>
    {{/histogram}}
    </svg>
    {{#hasFailures}}
    <h2>Failures</h2>
    <table id="failures"><thead><tr><th>line</th><th>URL</th><th>error</th></tr></thead><tbody>
    {{#failures}}<tr class="failure"><td>{{line}}</td><td class="url">{{url}}</td><td>{{error}}</td></tr>
    {{/failures}}</tbody></table>
    {{/hasFailures}}
    <h2>Images</h2>
    {{#sections}}<section class="sheet">
    {{#images}}<figure class="image">{{#thumbnail}}<img src="{{thumbnail}}" alt="{{file}}" loading="lazy" decoding="async">{{/thumbnail}}{{^thumbnail}}<div class="none">no preview</div>{{/thumbnail}}<figcaption><b>{{file}}</b><br>{{format}} {{width}}×{{height}} · {{size}}<br>{{ms}} ms · <span class="source-{{source}}">{{source}}</span></figcaption></figure>
    {{/images}}</section>
    {{/sections}}
    {{#omitted}}<p class="omitted">{{omitted}}</p>{{/omitted}}
    </body>
    </html>
    """#
}
