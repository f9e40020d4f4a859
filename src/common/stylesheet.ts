// The one stylesheet of every kigo page, on both sides: inline in each page (the pages'
// CSP allows inline style and nothing else). Page-specific parts are scoped by a class on
// <body> or on their element. Pages must fit a 390 px phone without sideways scrolling
// (test/browser/phone-layout.test.ts).

export const siteStylesheet = `
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#f4f5f7}
header.site{background:#2b3a55;color:#fff}
header.site .bar{max-width:980px;margin:0 auto;padding:.6rem 1.2rem;display:flex;flex-wrap:wrap;align-items:center;gap:.4rem 1rem}
header.site a.brand{color:#fff;font-weight:700;font-size:1.2rem;text-decoration:none;letter-spacing:.02em}
header.site .where{color:#dfe6f3;font-size:.95rem}
header.site nav.site{flex:1;display:flex;flex-wrap:wrap;gap:.2rem 1rem;font-size:.9rem}
header.site nav.site a,header.site .who a{color:#dfe6f3;text-decoration:none}
header.site .who{font-size:.9rem;display:flex;flex-wrap:wrap;align-items:center;gap:.3rem .8rem;min-width:0}
header.site .who form{margin:0}
header.site .meta{color:#c9d1d9;font-size:.8rem}
header.site button.link,header.site .who button{background:none;border:1px solid #8fa0c0;color:#fff;padding:.2rem .7rem;border-radius:4px;cursor:pointer;font:inherit}
main{max-width:760px;margin:1.5rem auto;padding:0 1.2rem}
main.narrow{max-width:440px}
main.wide{max-width:980px}
main.full{max-width:1120px}
.card{background:#fff;border:1px solid #d8dce3;border-radius:8px;padding:1.3rem 1.5rem;margin-bottom:1.2rem;max-width:100%}
.scroll{overflow-x:auto;max-width:100%}
h1{font-size:1.4rem;margin:0 0 1rem}
h2{font-size:1.1rem;margin:0 0 .8rem}
p{margin:.5rem 0}
a{color:#2b5cab}
.muted{color:#59636e;font-size:.9rem}
label{display:block;font-weight:600;margin:.8rem 0 .3rem}
label.check{font-weight:400;margin:.3rem 0;display:flex;gap:.5rem;align-items:baseline}
input[type=text],input[type=password],input[type=url],input[type=email],textarea{width:100%;padding:.5rem .6rem;border:1px solid #b9c0ca;border-radius:5px;font:inherit;background:#fff}
button{font:inherit;padding:.5rem 1.1rem;border-radius:5px;border:1px solid #2b3a55;background:#2b3a55;color:#fff;cursor:pointer}
button.secondary,a.button.secondary{background:#fff;color:#2b3a55}
button.danger{background:#fff;color:#b42318;border-color:#b42318}
button.copy{padding:.15rem .6rem;margin-left:.4rem;font-size:.85rem}
select{padding:.45rem .6rem;border:1px solid #b9c0ca;border-radius:5px;font:inherit;background:#fff}
a.button{display:inline-block;padding:.5rem 1.1rem;border-radius:5px;border:1px solid #2b3a55;text-decoration:none}
.actions{display:flex;flex-wrap:wrap;gap:.8rem;margin-top:1.2rem}
.error{background:#fdecea;border:1px solid #f5c2bd;color:#8a1c12;border-radius:5px;padding:.6rem .8rem;margin:.5rem 0 1rem}
.notice{background:#e8f3ec;border:1px solid #b7dcc4;color:#1a5c32;border-radius:5px;padding:.6rem .8rem;margin:.5rem 0 1rem}
.warn{background:#fff4e5;border:1px solid #f5d0a0;color:#7a4b00;border-radius:5px;padding:.6rem .8rem;margin:.5rem 0 1rem}
ul.scopes{padding-left:1.2rem;margin:.5rem 0}
ul.scopes li{margin:.3rem 0}
code,.secret{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9rem;background:#f0f2f5;padding:.1rem .35rem;border-radius:4px;overflow-wrap:anywhere}
.verifier{font-size:2.6rem;font-weight:700;letter-spacing:.18em;display:block;text-align:center;padding:.9rem .5rem;margin:1rem 0;overflow-wrap:normal;white-space:nowrap;overflow-x:auto;user-select:all;-webkit-user-select:all;cursor:text;border:2px dashed #8fa0c0}
.nowrap{white-space:nowrap}
/* A date never breaks inside (after its hyphens, or between its day and time). */
time,.date{white-space:nowrap}
table{width:100%;border-collapse:collapse;font-size:.95rem}
th,td{text-align:left;padding:.45rem .4rem;border-bottom:1px solid #e4e7ec;vertical-align:top}
th{font-weight:600;color:#59636e;font-size:.85rem}
td{overflow-wrap:break-word}
td form{margin:0}
tr.refused td{background:#fdecea}
tr.moved td{background:#eef6f0}
dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.4rem 1rem;margin:0}
dt{font-weight:600;color:#59636e}
dd{margin:0;min-width:0;overflow-wrap:anywhere}
details summary{cursor:pointer;color:#2b3a55}
ul.plain{list-style:none;padding:0;margin:0}
.local{color:#59636e}
pre{background:#f0f2f5;border-radius:6px;padding:.8rem 1rem;overflow-x:auto;font-size:.85rem;line-height:1.45;max-width:100%}
pre code{background:none;padding:0;overflow-wrap:normal}
nav.toc a{margin-right:.8rem}
/* The public pages: the timeline, a user's page, an entry, a keyword. */
body.public main{max-width:42rem;overflow-wrap:anywhere}
article.entry{border-bottom:1px solid #e4e7ec;padding:.75rem 0;display:flex;gap:.6rem}
article.entry img.icon{width:40px;height:40px;flex:none;border-radius:4px}
article.entry>div{min-width:0}
.meta{font-size:.85rem;color:#59636e}
.body img{max-width:100%;height:auto}
.replies{margin-left:1.5rem}
nav.pages{display:flex;justify-content:space-between;padding:1rem 0}
/* The operator dashboard. */
body.dash{font-size:14px;background:#f6f7f9}
body.dash main{margin-top:0;padding-bottom:48px}
body.dash section{background:#fff;border:1px solid #d8dee4;border-radius:6px;padding:16px 20px;margin-top:16px;overflow-x:auto}
body.dash h1.dash-title{margin:16px 0 0}
body.dash h2{font-size:16px;margin:0 0 10px}
body.dash table{font-size:inherit}
body.dash th,body.dash td{padding:6px 8px;border-bottom:1px solid #eaeef2}
body.dash thead th{font-size:12px;text-transform:uppercase;letter-spacing:.03em;color:#57606a}
body.dash tbody th{font-weight:600;color:inherit;font-size:inherit}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.legend{display:flex;gap:18px;flex-wrap:wrap;margin:8px 0 0;padding:0;list-style:none}
.legend li{display:flex;align-items:center;gap:6px}
.swatch{width:12px;height:12px;border-radius:2px;display:inline-block}
.ranges a{margin-right:10px}
.ranges a.current{font-weight:600;color:#1f2328;text-decoration:none}
.chart-frame svg{display:block;width:100%;height:auto}
.state{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600}
.state-allow{background:#dafbe1;color:#1a7f37}.state-deprecate{background:#fff8c5;color:#7d4e00}
.state-brownout{background:#ffe2cc;color:#953800}.state-deny{background:#ffebe9;color:#cf222e}
.refusing{color:#cf222e;font-weight:600}
.next{margin:0 0 10px}
body.dash code{font-size:12px;background:#f6f8fa;padding:1px 4px;border-radius:3px}
/* A user ID is never broken (32 characters at most); a long address gives way instead. */
code.id{overflow-wrap:normal;white-space:nowrap}
td a[href^="mailto:"]{overflow-wrap:break-word}
form.login{max-width:380px;margin:60px auto;background:#fff;border:1px solid #d8dee4;border-radius:6px;padding:24px}
form.login input{width:100%;padding:8px;border:1px solid #d0d7de;border-radius:4px;font:inherit}
form.login button{margin-top:16px}
form.filters,form.policy-form{display:flex;flex-wrap:wrap;gap:8px 12px;align-items:flex-end;margin:0 0 12px}
form.filters label,form.policy-form label{display:flex;flex-direction:column;font-size:12px;color:#57606a;gap:2px;margin:0;font-weight:400}
form.filters input,form.filters select,form.policy-form input,form.policy-form select{font:inherit;padding:4px 6px;border:1px solid #d0d7de;border-radius:4px;min-width:0;max-width:100%}
form.filters button,form.policy-form button{padding:5px 12px;border:1px solid #1f883d;background:#1f883d;color:#fff;border-radius:4px;font-weight:600}
.moved-yes{color:#1a7f37;font-weight:600}.moved-no{color:#953800}
details#policy-forms summary{cursor:pointer;font-weight:600;margin:10px 0}
details#policy-forms h3{font-size:14px;margin:12px 0 6px}
form.apply{margin:12px 0}
ul.diff.told{margin:10px 0}
pre.change{margin:0;white-space:pre-wrap;overflow-wrap:anywhere;font:12px ui-monospace,SFMono-Regular,Menlo,monospace;background:none;padding:0}
ul.diff{margin:0;padding:0;list-style:none;font:12px ui-monospace,SFMono-Regular,Menlo,monospace}
ul.diff li{overflow-wrap:anywhere}
ul.diff del{color:#cf222e;text-decoration:line-through}ul.diff ins{color:#1a7f37;text-decoration:none}
/* A phone: no page is wider than the screen. Tables of the class "cards" become one card
   per row (its label beside each value); others scroll inside their own box. */
@media (max-width: 700px){
  header.site .bar{padding:.5rem .75rem}
  main{margin:1rem auto;padding:0 .6rem}
  .card{padding:1rem .9rem}
  body.dash section{padding:12px;overflow-x:visible}
  table.cards,table.cards tbody,table.cards tr,table.cards td,table.cards th{display:block;width:100%}
  table.cards thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
  table.cards tr{border:1px solid #d8dee4;border-radius:6px;margin:0 0 10px;padding:6px 8px}
  table.cards td,table.cards tbody th{border:0;padding:3px 0;text-align:left;overflow-wrap:break-word;position:relative;min-height:1.4em}
  /* The label floats in the cell's left padding, and the cell (a formatting context of its
     own) grows to hold it: a label of two lines never runs into the next one. */
  table.cards td[data-label],table.cards tbody th[data-label]{display:flow-root;padding-left:8.5rem}
  table.cards td[data-label]::before,table.cards tbody th[data-label]::before{content:attr(data-label);float:left;margin-left:-8.5rem;width:8rem;padding-top:2px;font-size:12px;line-height:1.3;color:#57606a;font-weight:600;text-transform:uppercase;overflow-wrap:break-word}
  table.cards td.num{text-align:left}
  table.cards td.nowrap{white-space:normal}
  dl{grid-template-columns:minmax(0,1fr);gap:0}
  dt{margin-top:.5rem}
  dd{margin:0}
  table.cards td code,table.cards td.url{overflow-wrap:anywhere}
  table.cards td.row-actions{display:flex;flex-wrap:wrap;gap:6px;padding-top:6px}
  table.cards td.row-actions form{margin:0}
  form.filters label,form.policy-form label{flex:1 1 40%}
  /* The chart is scaled to the screen (about 0.45 at 390 px): its labels are drawn larger to stay readable. */
  #method-chart text{font-size:26px}
}
`.trim()
