//! `/`: the live page. Self-contained (inline CSS and script, nothing loaded from elsewhere);
//! its script fetches `/live.json` every interval and redraws its charts without reloading:
//! IOPS and MB/s, p99 and mean latency per class, the machine's CPU (busy and iowait, 0–100 % of
//! all CPUs), storlab's CPU (% of one CPU), device utilisation (0–100 %), the verdict so far
//! and the CPU over the measured phase. Every chart has a time axis (seconds of I/O since the
//! run started) and a value axis with its unit on each tick. A long run's charts draw its latest
//! intervals one by one and the ones before merged (`/live.json`'s `history`, which
//! `#history` says how it merged: a merged point's p99 is an upper bound). Each chart is an
//! `<svg data-chart="ID" data-points="N">` whose tick labels are `<text data-axis="x|y">`; the
//! body's `data-updates` counts the updates the page has drawn and `data-done` is `1` once the
//! run is over; `#cpu`'s `data-machine-busy` is the machine's busy share as the page shows it.
//!
//! Data reaches the page as text only. The page is a maud template, which escapes every value
//! it interpolates (the host's name, the address); only the page's own constant style and
//! script go in unescaped. The script puts what `/live.json` says (class, device and phase
//! names, the verdict) into the document with `textContent`, `createTextNode` and
//! `setAttribute` only, never as markup (a unit test keeps it free of `innerHTML` and the
//! like). The [`content_security_policy`] allows no script or style but these two, by their
//! SHA-256, so markup that got in anyway could not run.

use super::State;
use base64::Engine as _;
use maud::{DOCTYPE, PreEscaped, html as markup};
use sha2::{Digest, Sha256};
use std::sync::OnceLock;

/// The charts: `data-chart` id and caption, in the page's order.
const CHARTS: [(&str, &str); 7] = [
    ("iops", "IOPS"),
    ("mbps", "MB/s"),
    ("p99", "p99 latency per class and direction"),
    ("mean", "Mean latency per class and direction"),
    (
        "machine-cpu",
        "The machine's CPU, % of all CPUs (iowait is idle time with I/O pending, not busy)",
    ),
    (
        "storlab-cpu",
        "storlab's CPU, % of one CPU (above 100% when it keeps more than one CPU busy)",
    ),
    ("devices", "Device utilisation, % of the interval busy"),
];

/// The page, for the run `s` is of.
pub(super) fn html(s: &State) -> String {
    let title = format!("storlab live · {}", s.host);
    markup! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) }
                style { (PreEscaped(STYLE)) }
            }
            body data-updates="0" data-done="0" {
                h1 { (title) }
                @if !s.loopback {
                    p class="exposed" {
                        "Served on " (s.served_on) " (not loopback): anyone who can reach this \
                         address can read this page and /metrics."
                    }
                }
                p id="state" { "waiting for the first interval…" }
                p id="verdict" {}
                p id="cpu" {}
                p id="history" class="note" {}
                @for (id, caption) in CHARTS {
                    figure {
                        figcaption { (caption) }
                        svg data-chart=(id) data-points="0" viewBox="0 0 640 224" {}
                        div class="legend" {}
                    }
                }
                script { (PreEscaped(SCRIPT)) }
            }
        }
    }
    .into_string()
}

/// The `Content-Security-Policy` of every response: nothing may load or run but the page's
/// own style and script (by their SHA-256) and its requests to this server (`/live.json`); no
/// images, frames, forms, plugins or base URL; no other site may frame it.
pub(super) fn content_security_policy() -> &'static str {
    static POLICY: OnceLock<String> = OnceLock::new();
    POLICY.get_or_init(|| {
        format!(
            "default-src 'none'; script-src '{}'; style-src '{}'; connect-src 'self'; \
             base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
            sha256(SCRIPT),
            sha256(STYLE)
        )
    })
}

/// A CSP hash source of `text`: `sha256-` and its SHA-256 in base64.
fn sha256(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    format!(
        "sha256-{}",
        base64::engine::general_purpose::STANDARD.encode(digest.as_slice())
    )
}

/// The page's style sheet.
const STYLE: &str = r##"body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;max-width:60em;color:#222;background:#fff}
@media (prefers-color-scheme:dark){body{color:#ddd;background:#181818}}
h1{font-size:1.3em}.exposed{border:2px solid #c00;padding:.5em}
figure{margin:1em 0}figcaption{font-weight:600}svg{width:100%;height:auto;border:1px solid #8884}
svg text{font-size:11px;fill:currentColor}svg .grid{stroke:#8884;stroke-width:1}
.k{display:inline-block;margin-right:1em}.k i{display:inline-block;width:.8em;height:.8em;margin-right:.3em}
#state{font-weight:600}.note{font-size:.9em;opacity:.8}
"##;

/// The page's script; it reaches the page only as text (see the module's documentation).
const SCRIPT: &str = r##"const COLOURS=["#1f77b4","#d62728","#2ca02c","#ff7f0e","#9467bd","#8c564b","#e377c2","#17becf"];
const NS="http://www.w3.org/2000/svg";
// The plot area inside each chart's 640 × 224 view box.
const L=84,R=628,T=10,B=180;
function el(parent,name,attrs,text){
  const e=document.createElementNS(NS,name);
  for(const k in attrs){e.setAttribute(k,attrs[k]);}
  if(text!=null){e.textContent=text;}
  parent.appendChild(e);
  return e;
}
// The smallest of 1, 2, 2.5, 5 × 10^k at least x.
function nice(x){
  if(!(x>0)){return 1;}
  const p=Math.pow(10,Math.floor(Math.log10(x)));
  for(const m of [1,2,2.5,5]){if(m*p>=x*(1-1e-9)){return m*p;}}
  return 10*p;
}
// A number for a tick: at most 3 significant digits, k and M for thousands and millions.
function num(v){
  const a=Math.abs(v);
  if(a>=1e6){return String(Number((v/1e6).toPrecision(3)))+'M';}
  if(a>=1e4){return String(Number((v/1e3).toPrecision(3)))+'k';}
  return String(Number(v.toPrecision(4)));
}
// The time axis: 0 to the last point, ticks every 1, 2, 5, 10, 15 or 30 s, minutes or hours.
function timeAxis(tmax){
  const steps=[1,2,5,10,15,30,60,120,300,600,900,1800,3600,7200,10800,21600,43200,86400];
  let step=steps.find(s=>tmax/s<=6);
  if(step==null){step=86400*Math.ceil(tmax/86400/6);}
  const end=Math.max(step,Math.ceil(tmax/step-1e-9)*step);
  const label=step<60?(t=>num(t)+' s'):step<3600?(t=>num(t/60)+' min'):(t=>num(t/3600)+' h');
  const ticks=[];
  for(let t=0;t<=end+1e-9;t+=step){ticks.push(t);}
  return {end,ticks,label};
}
// The value axis of a chart whose values are in `unit`: 0–100 when `fixed`, else 0 to the
// largest value rounded up to a nice number.
function valueAxis(max,unit,fixed){
  let top,step;
  if(fixed){top=100;step=25;}
  else{step=nice((max>0?max:1)/4);top=Math.max(step,Math.ceil(max/step-1e-9)*step);}
  let label;
  if(unit==='%'){label=v=>num(v)+'%';}
  else if(unit==='µs'){label=top>=1000?(v=>num(v/1000)+' ms'):(v=>num(v)+' µs');}
  else{label=v=>num(v)+' '+unit;}
  const ticks=[];
  for(let v=0;v<=top+1e-9*top;v+=step){ticks.push(v);}
  return {top,ticks,label};
}
// Draws series [{name, points: [[t_s, value or null]]}] in chart `id`, its time axis running
// to `tmax`; values in `unit`, on a fixed 0–100 scale when `fixed`.
function draw(id,series,tmax,unit,fixed){
  const svg=document.querySelector('svg[data-chart="'+id+'"]');
  const legend=svg.nextElementSibling;
  let max=0,n=0;
  for(const s of series){for(const [,v] of s.points){if(v!=null){max=Math.max(max,v);}}n=Math.max(n,s.points.length);}
  const x=timeAxis(tmax),y=valueAxis(max,unit,fixed);
  svg.replaceChildren();
  for(const v of y.ticks){
    const py=B-v/y.top*(B-T);
    el(svg,'line',{class:'grid',x1:L,x2:R,y1:py,y2:py});
    el(svg,'text',{'data-axis':'y',x:L-6,y:py+4,'text-anchor':'end'},y.label(v));
  }
  for(const t of x.ticks){
    const px=L+t/x.end*(R-L);
    el(svg,'line',{class:'grid',x1:px,x2:px,y1:T,y2:B});
    el(svg,'text',{'data-axis':'x',x:px,y:B+16,'text-anchor':'middle'},x.label(t));
  }
  el(svg,'text',{x:(L+R)/2,y:B+36,'text-anchor':'middle'},'time since the I/O started');
  series.forEach((s,i)=>{
    let d='',pen='M';
    for(const [t,v] of s.points){
      if(v==null){pen='M';continue;}
      d+=pen+(L+t/x.end*(R-L)).toFixed(1)+','+(B-Math.min(v,y.top)/y.top*(B-T)).toFixed(1);
      pen='L';
    }
    el(svg,'path',{'data-series':s.name,fill:'none','stroke-width':2,stroke:COLOURS[i%COLOURS.length],d:d});
  });
  if(series.length===0){el(svg,'text',{x:(L+R)/2,y:(T+B)/2,'text-anchor':'middle'},'no data');}
  svg.setAttribute('data-points',String(n));
  legend.replaceChildren();
  series.forEach((s,i)=>{
    const k=legend.appendChild(document.createElement('span'));
    k.className='k';
    k.appendChild(document.createElement('i')).style.background=COLOURS[i%COLOURS.length];
    k.appendChild(document.createTextNode(s.name));
  });
}
async function update(){
  let wait=1000;
  try{
    const r=await fetch('/live.json',{cache:'no-store'});
    const d=await r.json();
    wait=Math.max(250,d.interval_ms||1000);
    const p=d.history.concat(d.points);
    const tmax=p.reduce((m,x)=>Math.max(m,x.t_s),0);
    const line=(f)=>p.map(x=>[x.t_s,f(x)]);
    draw('iops',[{name:'total',points:line(x=>x.iops)}].concat(p.some(x=>x.transactional_iops!=null)?[{name:'transactional',points:line(x=>x.transactional_iops)}]:[]),tmax,'IOPS',false);
    draw('mbps',[{name:'total',points:line(x=>x.mb_per_s)}],tmax,'MB/s',false);
    const classes=[...new Set(p.flatMap(x=>Object.keys(x.classes)))];
    const lat=(what)=>classes.flatMap(c=>['read','write'].map(dir=>dir+'_'+what+'_us').filter(k=>p.some(x=>x.classes[c]&&x.classes[c][k]!=null)).map(k=>({name:c+' '+k.split('_')[0],points:line(x=>x.classes[c]?x.classes[c][k]:null)})));
    draw('p99',lat('p99'),tmax,'µs',false);
    draw('mean',lat('mean'),tmax,'µs',false);
    draw('machine-cpu',[{name:'machine busy',points:line(x=>x.cpu.machine_busy_pct)},{name:'machine iowait (idle)',points:line(x=>x.cpu.machine_iowait_pct)}],tmax,'%',true);
    draw('storlab-cpu',[{name:'storlab user+sys',points:line(x=>x.cpu.storlab_pct_of_one_cpu)}],tmax,'%',false);
    const devs=[...new Set(p.flatMap(x=>Object.keys(x.devices)))];
    draw('devices',devs.map(n=>({name:n,points:line(x=>n in x.devices?x.devices[n].util_pct:null)})),tmax,'%',true);
    const last=p[p.length-1];
    document.getElementById('state').textContent=(d.done?'the run is over':'phase: '+d.phase)+(last?' · '+Math.round(last.iops)+' IOPS at '+last.t_s.toFixed(1)+' s':'');
    document.getElementById('verdict').textContent='verdict so far: '+d.verdict;
    document.getElementById('history').textContent=d.history_note||'';
    const cpu=document.getElementById('cpu');
    if(d.cpu){cpu.textContent=d.cpu.text;cpu.dataset.machineBusy=d.cpu.machine_busy;}
    document.body.dataset.updates=String(Number(document.body.dataset.updates)+1);
    if(d.done){document.body.dataset.done='1';return;}
  }catch(e){document.getElementById('state').textContent='the run has ended (no answer from storlab)';return;}
  setTimeout(update,wait);
}
update();
"##;

#[cfg(test)]
mod tests {
    use super::{SCRIPT, STYLE, State, content_security_policy, html, sha256};

    /// The text between `open` and the next `close` in `page`.
    fn between<'a>(page: &'a str, open: &str, close: &str) -> &'a str {
        let start = page.find(open).unwrap() + open.len();
        &page[start..start + page[start..].find(close).unwrap()]
    }

    #[test]
    fn values_are_escaped_and_the_policy_allows_the_pages_own_script_and_style_only() {
        let s = State {
            host: "<img src=x onerror=alert(1)>".into(),
            served_on: "0.0.0.0:9100\"><script>".into(),
            loopback: false,
            ..State::default()
        };
        let page = html(&s);
        assert!(!page.contains("<img"), "{page}");
        assert!(
            page.contains("<title>storlab live · &lt;img src=x onerror=alert(1)&gt;</title>"),
            "{page}"
        );
        assert!(page.contains("Served on 0.0.0.0:9100&quot;&gt;&lt;script&gt; (not loopback)"));
        // One script and one style, the constants as they are; the policy names their hashes.
        assert_eq!(page.matches("<script").count(), 1, "{page}");
        assert_eq!(between(&page, "<script>", "</script>"), SCRIPT);
        assert_eq!(between(&page, "<style>", "</style>"), STYLE);
        let policy = content_security_policy();
        assert!(
            policy.contains(&format!("script-src '{}';", sha256(SCRIPT))),
            "{policy}"
        );
        assert!(policy.contains(&format!("style-src '{}';", sha256(STYLE))));
        assert!(policy.starts_with("default-src 'none';") && !policy.contains("unsafe"));
        // A known digest: SHA-256 of the empty string.
        assert_eq!(
            sha256(""),
            "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
        );
    }

    #[test]
    fn the_script_puts_data_into_the_page_as_text_only() {
        for sink in [
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "createContextualFragment",
            "DOMParser",
            "srcdoc",
            "eval(",
            "Function(",
            "setAttribute('on",
            "setAttribute(\"on",
        ] {
            assert!(!SCRIPT.contains(sink), "the live page's script uses {sink}");
        }
        // Attributes are set by `el` from names the script itself writes; data goes into
        // `textContent` or a text node.
        assert!(SCRIPT.contains("e.textContent=text"));
        assert!(SCRIPT.contains("createTextNode(s.name)"));
        assert!(!SCRIPT.contains("</script") && !STYLE.contains("</style"));
    }
}
