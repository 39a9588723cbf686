--[[
course-variant.lua — one filter for both ways this course is rendered.

* Under Quarto (`quarto render --profile student|answer`): the variant is the active profile; Quarto itself
  handles .content-visible/.content-hidden, callouts and mermaid, and passes a cell's `#| course_role:`
  option as an attribute of the cell Div. The profile's _quarto-NAME.yml sets `course-shows-solutions` (from
  course.lesson.variants). The filter drops solution cells where the variant does not show them, makes an
  .img-card a figure with one caption, and turns links to lessons that do not exist yet into plain text. It
  finds the other lessons beside the real input file (quarto.doc.input_file): Quarto hands pandoc a temporary
  copy of the lesson, elsewhere.
* Under plain pandoc (`pandoc -f commonmark_x --lua-filter … -M course-variant=student
  -M course-shows-solutions=false`, the options course.site.render_page.filter_metadata gives), as `course build`
  and the tests use it: the filter also reads `#|` lines of ```{python} blocks, applies the profile divs
  (course-variant names the profile they are shown to),
  draws callouts as HTML (collapsible ones as <details>), makes an .img-card (image + caption paragraph) a
  <figure> and hands mermaid blocks to the browser.
* On both paths, a mention of another lesson in the text ("第 4 课", "第4课") links to that lesson when its
  lessonNN.qmd exists beside this one and stays plain text when it does not; a lesson never links to itself.
]]

local in_quarto = type(quarto) == "table" and quarto.doc ~= nil
local shows_solutions = false  -- course-shows-solutions: the variant keeps its solution cells
local active_profile = nil  -- under pandoc, course-variant: the profile whose profile divs are shown
local input_dir = "."
local this_lesson = nil  -- the page's own lesson number (front matter `lesson:`, or -M lesson=N)
local link_prefix = ""  -- from this page to the lessons' pages: "" beside them, "lessons/" from Quarto's index

-- A yes/no setting of the page's metadata (a YAML boolean, or pandoc's -M KEY=true|false); missing is an error:
-- what a student may see is never guessed.
local function meta_flag(meta, key)
  local value = meta[key]
  if type(value) == "boolean" then return value end
  local text = value ~= nil and pandoc.utils.stringify(value) or ""
  if text == "true" or text == "false" then return text == "true" end
  error("course-variant: metadata " .. key .. " must be true or false, got '" .. text .. "' (under Quarto each "
        .. "profile's _quarto-NAME.yml sets it; under pandoc, -M " .. key .. "=true|false)")
end

local function file_exists(path)
  local f = io.open(path, "r")
  if f then f:close() return true end
  return false
end

local function has_class(el, name)
  for _, c in ipairs(el.classes) do if c == name then return true end end
  return false
end

-- `#| key: value` lines at the top of a code block, as a table, and the code without them.
local function cell_options(text)
  local opts, body, in_header = {}, {}, true
  for line in (text .. "\n"):gmatch("(.-)\n") do
    local k, v = line:match("^#|%s*([%w_-]+)%s*:%s*(.-)%s*$")
    if in_header and k then
      opts[k] = v
    else
      in_header = false
      table.insert(body, line)
    end
  end
  return opts, table.concat(body, "\n")
end

local function profile_div_shows(div)
  local visible = has_class(div, "content-visible")
  if not visible and not has_class(div, "content-hidden") then return nil end
  local profile = div.attributes["when-profile"]
  if not profile then return nil end
  return (profile == active_profile) == visible
end

local function escape_html(s)
  return (s:gsub("&", "&amp;"):gsub("<", "&lt;"):gsub(">", "&gt;"))
end

local function callout_html(div, kind)
  local title = div.attributes["title"] or ({ note = "注意", tip = "提示", important = "重要", warning = "警告", caution = "小心" })[kind] or kind
  local collapse = div.attributes["collapse"] == "true"
  local open_tag, close_tag, head
  if collapse then
    open_tag = '<details class="callout callout-' .. kind .. '">'
    head = '<summary class="callout-title">' .. escape_html(title) .. '</summary>'
    close_tag = '</details>'
  else
    open_tag = '<div class="callout callout-' .. kind .. (div.attributes["appearance"] == "simple" and ' callout-simple' or '') .. '">'
    head = (div.attributes["title"] and ('<div class="callout-title">' .. escape_html(title) .. '</div>') or '')
    close_tag = '</div>'
  end
  local blocks = pandoc.List({ pandoc.RawBlock("html", open_tag .. head .. '<div class="callout-body">') })
  blocks:extend(div.content)
  blocks:insert(pandoc.RawBlock("html", '</div>' .. close_tag))
  return blocks
end

-- The single image of a block: a paragraph holding only it, or a figure pandoc made of it (implicit_figures).
local function lone_image(block)
  if block.t == "Figure" and #block.content == 1 then block = block.content[1] end
  if (block.t == "Para" or block.t == "Plain") and #block.content == 1 and block.content[1].t == "Image" then
    return block.content[1]
  end
  return nil
end

-- An .img-card div (an image, then one paragraph: its caption) becomes a <figure> with that paragraph as its
-- <figcaption> (under Quarto too, which would otherwise show the alt text as a second caption); where the
-- author wrote no alt text (`![](…)`), the caption is also the image's alt text.
local function img_card(div)
  if #div.content ~= 2 or div.content[2].t ~= "Para" then return nil end
  local image = lone_image(div.content[1])
  if not image then return nil end
  local caption = div.content[2].content
  if #image.caption == 0 then image.caption = caption end
  -- Quarto writes a figure's image with the alt text given as fig-alt and drops the caption-derived one.
  if in_quarto then image.attributes["fig-alt"] = pandoc.utils.stringify(image.caption) end
  return pandoc.Figure({ pandoc.Plain({ image }) }, { pandoc.Plain(caption) },
                       pandoc.Attr(div.identifier, div.classes, div.attributes))
end

local Link  -- defined below; the lesson list's links go through it too

-- The files the course's pre-render step writes for the variant being rendered, in the variant's own folder of the
-- build cache (metadata course-includes in _quarto.yml), so that renders of two variants never share one. Quarto
-- hands a page that folder relative to the page's own (it rebases project metadata naming a path that exists).
local includes = ".course-cache/quarto"
local function include_path(name)
  local page_dir = quarto.doc.input_file:match("^(.*)[/\\]") or quarto.project.directory
  return page_dir .. "/" .. includes .. "/" .. active_profile .. "/" .. name
end

-- Quarto's front page (index.qmd): the lesson list that the course's pre-render step wrote for this variant.
local function lesson_list(div)
  local path = include_path(div.attributes["include"])
  local f = io.open(path, "r")
  if not f then error("course-variant: " .. path .. " not found; it is written by the pre-render step in _quarto.yml") end
  local text = f:read("a")
  f:close()
  return pandoc.read(text, "markdown").blocks:walk({ Link = Link })
end

-- Under Quarto, the note above a cell that is shown but not run (an exercise with blanks), as the pandoc page has
-- it: the pre-render step writes it into the same file as the in-browser blocks (div #course-cell-note).
local not_run_note = nil

-- A cell Quarto shows but did not run: its code has a blank (______, which cannot run) and it has no output.
local function not_run(div)
  local blank, output = false, false
  for _, block in ipairs(div.content) do
    if block.t == "CodeBlock" and block.text:find("______", 1, true) then blank = true end
    if block.t == "Div" and (has_class(block, "cell-output") or has_class(block, "cell-output-display")) then
      output = true
    end
  end
  return blank and not output
end

-- Under Quarto, a lesson page opens with its "在浏览器中运行" block (or why there is none), as the pandoc page does:
-- the course's pre-render step wrote every lesson's block (course.site.lite_page) into a file, each in a div #STEM.
local function browser_block(doc)
  if not in_quarto or not this_lesson then return nil end
  local stem = quarto.doc.input_file:match("([^/\\]+)%.qmd$")
  local path = include_path("_lessons-browser.md")
  local f = io.open(path, "r")
  if not f then error("course-variant: " .. path .. " not found; it is written by the pre-render step in _quarto.yml") end
  local text = f:read("a")
  f:close()
  local found = nil
  for _, block in ipairs(pandoc.read(text, "markdown").blocks) do
    if block.t == "Div" and block.identifier == "course-cell-note" then not_run_note = block.content end
    if block.t == "Div" and block.identifier == stem then found = block end
  end
  if found then
    doc.blocks = found.content .. doc.blocks
    return doc
  end
  error("course-variant: " .. path .. " has no block for " .. stem .. " (pre-render writes one per lesson)")
end

-- Under Quarto, every page loads the course's own scripts for Quarto's pages (course.site's mermaid-options.js,
-- course-quarto.js, figure-viewer.js and course-lite.js, which the post-render step copies into site_libs/): the
-- search's note, the figures' full-size view, the in-browser block's and the index's notes and, on a page with
-- diagrams, the course's own mermaid (the pandoc pages' version, not the older one Quarto bundles) and look.
local QUARTO_SCRIPTS = { "mermaid-options.js", "course-quarto.js", "figure-viewer.js", "course-lite.js" }
local MERMAID_SCRIPT = "mermaid/mermaid.min.js"

local function has_diagram(doc)
  local found = false
  doc.blocks:walk({ CodeBlock = function(cb)
    for _, c in ipairs(cb.classes) do
      if c == "mermaid" or c == "{mermaid}" then found = true end
    end
  end })
  return found
end

local function page_scripts(doc)
  local relative = quarto.doc.input_file:sub(#quarto.project.directory + 2)
  local _, depth = relative:gsub("[/\\]", "")
  local tags, names = {}, pandoc.List(QUARTO_SCRIPTS)
  if has_diagram(doc) then names:insert(1, MERMAID_SCRIPT) end
  for _, name in ipairs(names) do
    table.insert(tags, '<script defer src="' .. string.rep("../", depth) .. 'site_libs/' .. name .. '"></script>')
  end
  doc.blocks:insert(pandoc.RawBlock("html", table.concat(tags, "\n")))
  return doc
end

-- A Quarto page: the lesson's in-browser block at the top, the course's scripts at the end.
local function quarto_page(doc)
  if not in_quarto then return nil end
  return page_scripts(browser_block(doc) or doc)
end

local function Div(div)
  if not shows_solutions and div.attributes["course_role"] == "solution" then
    return {}
  end
  if in_quarto and div.identifier == "course-lesson-list" then return lesson_list(div) end
  if in_quarto and not_run_note and has_class(div, "cell") and not_run(div) then
    div.classes:insert("cell-not-run")
    div.content = not_run_note .. div.content
    return div
  end
  if has_class(div, "img-card") then return img_card(div) end
  if in_quarto then return nil end
  local shows = profile_div_shows(div)
  if shows == true then return div.content end
  if shows == false then return {} end
  for _, c in ipairs(div.classes) do
    local kind = c:match("^callout%-(%a+)$")
    if kind then return callout_html(div, kind) end
  end
  return nil
end

-- A block that draws a mermaid diagram: its code block, the <pre class="mermaid"> this filter made of it, or a
-- Quarto cell holding either.
local function draws_diagram(block)
  local found = false
  pandoc.Blocks({ block }):walk({
    CodeBlock = function(cb)
      for _, c in ipairs(cb.classes) do
        if c == "mermaid" or c == "{mermaid}" then found = true end
      end
    end,
    RawBlock = function(raw) if raw.text:find('<pre class="mermaid', 1, true) then found = true end end,
  })
  return found
end

-- A diagram's caption ("图 5-1：…", the paragraph right after it) takes the style of every other figure's caption
-- (a .figure-caption, as under a figure a cell draws), on both renderers.
local function diagram_captions(blocks)
  for i = 2, #blocks do
    local para = blocks[i]
    if para.t == "Para" and pandoc.utils.stringify(para):match("^图%s*%d+%-%d+") and draws_diagram(blocks[i - 1]) then
      blocks[i] = pandoc.Div({ para }, pandoc.Attr("", { "figure-caption" }))
    end
  end
  return blocks
end

-- Under Quarto, an image's alt text is its fig-alt attribute: a figure written `![图 6-1：…](…)` would lose it.
local function Image(image)
  if not in_quarto or image.attributes["fig-alt"] or #image.caption == 0 then return nil end
  image.attributes["fig-alt"] = pandoc.utils.stringify(image.caption)
  return image
end

local function CodeBlock(cb)
  if in_quarto then return nil end
  local lang = cb.classes[1] and cb.classes[1]:match("^{(.-)}$")
  if lang == "mermaid" or cb.classes[1] == "mermaid" then
    return pandoc.RawBlock("html", '<pre class="mermaid">' .. escape_html(cb.text) .. '</pre>')
  end
  if lang then
    local opts, body = cell_options(cb.text)
    if opts["course_role"] == "solution" and not shows_solutions then return {} end
    return pandoc.CodeBlock(body, pandoc.Attr(cb.identifier, { lang }, cb.attributes))
  end
  return nil
end

-- Links to lessonNN.qmd: to the built page when that lesson exists, plain text when it does not yet. Under
-- Quarto a link to a notebook is left as written (the course's post-render step puts it beside the page; Quarto
-- would otherwise look for it among its inputs and warn).
function Link(link)
  if in_quarto and link.target:match("^[^:]*%.ipynb$") then
    link.attributes["noresolveinput"] = "1"
    return link
  end
  local target = link.target:match("^([%w_-]+)%.qmd$")
  if not target then return nil end
  if file_exists(input_dir .. "/" .. target .. ".qmd") then
    if in_quarto then return nil end
    link.target = target .. ".html"
    return link
  end
  local classes = pandoc.List(link.classes)
  classes:insert("link-unavailable")
  return pandoc.Span(link.content, pandoc.Attr(link.identifier, classes, { title = "本课尚未发布" }))
end

-- The page a mention of lesson N links to, or nil when lesson N does not exist (or is this page's own).
local function lesson_target(number)
  local n = tonumber(number)
  if not n or n == this_lesson then return nil end
  local stem = string.format("lesson%02d", n)
  if not file_exists(input_dir .. "/" .. stem .. ".qmd") then return nil end
  return link_prefix .. stem .. (in_quarto and ".qmd" or ".html")
end

local LESSON_WORD, LESSON_END = "第", "课"

local function lesson_link(words, target)
  return pandoc.Link(words, target, "", pandoc.Attr("", { "lesson-ref" }))
end

-- "…第4课…" inside one Str: split it around each mention that has a page.
local function split_str(text, out)
  local from, pos = 1, 1
  while true do
    local s, e, number = text:find(LESSON_WORD .. "(%d+)" .. LESSON_END, pos)
    if not s then break end
    local target = lesson_target(number)
    if target then
      if s > from then out:insert(pandoc.Str(text:sub(from, s - 1))) end
      out:insert(lesson_link({ pandoc.Str(text:sub(s, e)) }, target))
      from = e + 1
    end
    pos = e + 1
  end
  if from <= #text then out:insert(pandoc.Str(text:sub(from))) end
end

-- "第 4 课" as pandoc reads it: Str ending in 第, Space, Str of digits, Space, Str starting with 课.
local function lesson_mentions(inlines)
  local out, i = pandoc.List(), 1
  while i <= #inlines do
    local a, b, c, d, e = inlines[i], inlines[i + 1], inlines[i + 2], inlines[i + 3], inlines[i + 4]
    local target = e and a.t == "Str" and b.t == "Space" and c.t == "Str" and d.t == "Space" and e.t == "Str"
      and a.text:sub(-#LESSON_WORD) == LESSON_WORD and c.text:match("^%d+$")
      and e.text:sub(1, #LESSON_END) == LESSON_END and lesson_target(c.text)
    if target then
      split_str(a.text:sub(1, -#LESSON_WORD - 1), out)
      out:insert(lesson_link({ pandoc.Str(LESSON_WORD), b, c, d, pandoc.Str(LESSON_END) }, target))
      local suffix = e.text:sub(#LESSON_END + 1)
      if suffix == "" then i = i + 5 else inlines[i + 4] = pandoc.Str(suffix); i = i + 4 end
    elseif a.t == "Str" then
      split_str(a.text, out); i = i + 1
    else
      out:insert(a); i = i + 1
    end
  end
  return out
end

-- Quarto's navigation text (a Div or Span of class quarto-markdown-envelope-contents): never searched for mentions.
local function skip_envelope(el)
  if has_class(el, "quarto-markdown-envelope-contents") then return el, false end
  return nil
end

local function Meta(meta)
  shows_solutions = meta_flag(meta, "course-shows-solutions")
  active_profile = meta["course-variant"] and pandoc.utils.stringify(meta["course-variant"])
  if not in_quarto and not active_profile then
    error("course-variant: metadata course-variant (the profile this page is rendered as) is missing: "
          .. "-M course-variant=NAME")
  end
  if meta["course-includes"] then includes = pandoc.utils.stringify(meta["course-includes"]) end
  local dir = meta["course-lesson-dir"] and pandoc.utils.stringify(meta["course-lesson-dir"])
  if dir and in_quarto then  -- a page outside lessons/ (index.qmd): the folder, relative to the project
    link_prefix = dir .. "/"
    dir = quarto.project.directory .. "/" .. dir
  end
  if not dir then
    local first = in_quarto and quarto.doc.input_file or (PANDOC_STATE.input_files or {})[1]
    dir = first and first:match("^(.*)/[^/]*$") or "."
  end
  input_dir = dir
  this_lesson = meta.lesson and tonumber(pandoc.utils.stringify(meta.lesson))
end

return {
  { Meta = Meta, Pandoc = quarto_page },
  { Div = Div, CodeBlock = CodeBlock, Link = Link, Image = Image, Blocks = diagram_captions },
  -- Top-down, so that text already inside a link (or code) is left alone, and so is the text Quarto puts in an
  -- envelope to render for its navigation: the titles of the sidebar and of the previous and next links, which
  -- Quarto writes inside its own links, where a link of ours would be a link inside a link.
  { traverse = "topdown", Link = function(link) return link, false end, Inlines = lesson_mentions,
    Div = skip_envelope, Span = skip_envelope },
}
