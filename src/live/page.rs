//! `/`: the live page. Self-contained (inline CSS and script, nothing loaded from elsewhere);
//! its script fetches `/live.json` every interval and redraws its charts without reloading:
//! IOPS and MB/s, p99 and mean latency per class, CPU, device utilisation, and the verdict so
//! far. Each chart is an `<svg data-chart="ID" data-points="N">`; the body's `data-updates`
//! counts the updates the page has drawn.

use super::State;

/// The page, for the run `s` is of.
pub(super) fn html(s: &State) -> String {
    let exposed = if s.loopback {
        String::new()
    } else {
        format!(
            "<p class=\"exposed\">Served on {} (not loopback): anyone who can reach this address can read this page and /metrics.</p>",
            escape(&s.served_on)
        )
    };
    PAGE.replace("{{HOST}}", &escape(&s.host))
        .replace("{{EXPOSED}}", &exposed)
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const PAGE: &str = r##"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>storlab live · {{HOST}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;max-width:60em;color:#222;background:#fff}
@media (prefers-color-scheme:dark){body{color:#ddd;background:#181818}}
h1{font-size:1.3em}.exposed{border:2px solid #c00;padding:.5em}
figure{margin:1em 0}figcaption{font-weight:600}svg{width:100%;height:160px;border:1px solid #8884}
.k{display:inline-block;margin-right:1em}.k i{display:inline-block;width:.8em;height:.8em;margin-right:.3em}
#state{font-weight:600}
</style></head>
<body data-updates="0">
<h1>storlab live · {{HOST}}</h1>
{{EXPOSED}}
<p id="state">waiting for the first interval…</p>
<p id="verdict"></p>
<figure><figcaption>IOPS</figcaption><svg data-chart="iops" data-points="0" viewBox="0 0 600 160" preserveAspectRatio="none"></svg><div class="legend"></div></figure>
<figure><figcaption>MB/s</figcaption><svg data-chart="mbps" data-points="0" viewBox="0 0 600 160" preserveAspectRatio="none"></svg><div class="legend"></div></figure>
<figure><figcaption>p99 latency per class and direction, µs</figcaption><svg data-chart="p99" data-points="0" viewBox="0 0 600 160" preserveAspectRatio="none"></svg><div class="legend"></div></figure>
<figure><figcaption>Mean latency per class and direction, µs</figcaption><svg data-chart="mean" data-points="0" viewBox="0 0 600 160" preserveAspectRatio="none"></svg><div class="legend"></div></figure>
<figure><figcaption>CPU: storlab (% of one CPU) and the machine busy (%)</figcaption><svg data-chart="cpu" data-points="0" viewBox="0 0 600 160" preserveAspectRatio="none"></svg><div class="legend"></div></figure>
<figure><figcaption>Device utilisation, %</figcaption><svg data-chart="devices" data-points="0" viewBox="0 0 600 160" preserveAspectRatio="none"></svg><div class="legend"></div></figure>
<script>
const COLOURS=["#1f77b4","#d62728","#2ca02c","#ff7f0e","#9467bd","#8c564b","#e377c2","#17becf"];
function draw(id, series){
  const svg=document.querySelector('svg[data-chart="'+id+'"]');
  const legend=svg.nextElementSibling;
  let max=0,tmax=0,n=0;
  for(const s of series){for(const [t,v] of s.points){max=Math.max(max,v);tmax=Math.max(tmax,t);}n=Math.max(n,s.points.length);}
  max=max>0?max*1.1:1;tmax=tmax>0?tmax:1;
  let out='';
  series.forEach((s,i)=>{
    const pts=s.points.map(([t,v])=>(t/tmax*600).toFixed(1)+','+(160-v/max*150).toFixed(1)).join(' ');
    out+='<polyline data-series="'+s.name+'" fill="none" stroke-width="2" stroke="'+COLOURS[i%COLOURS.length]+'" points="'+pts+'"/>';
  });
  out+='<text x="4" y="12" font-size="11" fill="currentColor">'+Math.round(max)+'</text>';
  svg.innerHTML=out;
  svg.setAttribute('data-points',String(n));
  legend.innerHTML=series.map((s,i)=>'<span class="k"><i style="background:'+COLOURS[i%COLOURS.length]+'"></i>'+s.name+'</span>').join('');
}
async function update(){
  let wait=1000;
  try{
    const r=await fetch('/live.json',{cache:'no-store'});
    const d=await r.json();
    wait=Math.max(250,d.interval_ms||1000);
    const p=d.points;
    const line=(f)=>p.map(x=>[x.t,f(x)]);
    draw('iops',[{name:'total',points:line(x=>x.iops)}].concat(p.some(x=>x.transactional!=null)?[{name:'transactional',points:line(x=>x.transactional||0)}]:[]));
    draw('mbps',[{name:'total',points:line(x=>x.mb_per_s)}]);
    const classes=[...new Set(p.flatMap(x=>Object.keys(x.classes)))];
    const lat=(k,off)=>classes.flatMap(c=>[['read',0],['write',1]].filter(([_,j])=>p.some(x=>x.classes[c]&&x.classes[c][j+off]>0)).map(([dir,j])=>({name:c+' '+dir,points:p.filter(x=>x.classes[c]).map(x=>[x.t,x.classes[c][j+off]])})));
    draw('p99',lat('p99',0));
    draw('mean',lat('mean',2));
    draw('cpu',[{name:'storlab',points:line(x=>x.cpu[0])},{name:'machine busy',points:line(x=>x.cpu[1])}]);
    const devs=[...new Set(p.flatMap(x=>Object.keys(x.devices)))];
    draw('devices',devs.map(n=>({name:n,points:p.filter(x=>n in x.devices).map(x=>[x.t,x.devices[n]])})));
    const last=p[p.length-1];
    document.getElementById('state').textContent=(d.done?'the run is over':'phase: '+d.phase)+(last?' · '+Math.round(last.iops)+' IOPS at '+last.t.toFixed(1)+' s':'');
    document.getElementById('verdict').textContent='verdict so far: '+d.verdict;
    document.body.dataset.updates=String(Number(document.body.dataset.updates)+1);
    if(d.done){return;}
  }catch(e){document.getElementById('state').textContent='the run has ended (no answer from storlab)';return;}
  setTimeout(update,wait);
}
update();
</script>
</body></html>
"##;
