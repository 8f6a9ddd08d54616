<#
Install Waymark for this user on Windows: an isolated environment in Waymark's own folder,
`waymark` on PATH, the embedding model, then `waymark install` to connect the Claude Code
and Codex found on this machine. Hooks capture in every git repository unless -PerProject.
Re-running upgrades in place.

    .\install.ps1 [-NoSemantic] [-NoClients] [-PerProject] [-DryRun]

WAYMARK_PREFIX   where the environment goes (default: %LOCALAPPDATA%\waymark\env)
WAYMARK_BIN_DIR  where waymark.cmd goes (default: %LOCALAPPDATA%\waymark\bin, added to
                 your user PATH)
#>
[CmdletBinding()]
param(
    [switch]$NoSemantic,
    [switch]$NoClients,
    [switch]$PerProject,
    [switch]$DryRun
)
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version 3

function Say([string]$Message) { Write-Host "waymark-install: $Message" }
function Die([string]$Message) {
    Write-Host "waymark-install: error: $Message" -ForegroundColor Red
    exit 1
}

$src = $PSScriptRoot
if (-not (Test-Path -LiteralPath (Join-Path $src 'pyproject.toml'))) {
    Die "run install.ps1 from a Waymark checkout ($src has no pyproject.toml)"
}

$base = if ($env:LOCALAPPDATA) { $env:LOCALAPPDATA } else { Join-Path $HOME 'AppData\Local' }
$prefix = if ($env:WAYMARK_PREFIX) { $env:WAYMARK_PREFIX } else { Join-Path $base 'waymark\env' }
$binDir = if ($env:WAYMARK_BIN_DIR) { $env:WAYMARK_BIN_DIR } else { Join-Path $base 'waymark\bin' }
$envPython = Join-Path $prefix 'Scripts\python.exe'
$waymarkExe = Join-Path $prefix 'Scripts\waymark.exe'

# True when `$Exe $Pre -c ...` is a Python >= 3.10. The Microsoft Store stub and broken
# launchers fail this test instead of opening anything.
function Test-Python([string]$Exe, [string[]]$Pre) {
    try {
        & $Exe @Pre -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>$null | Out-Null
        return ($LASTEXITCODE -eq 0)
    } catch {
        return $false
    }
}

function Find-Python {
    $candidates = @(
        @('py', '-3.13'), @('py', '-3.12'), @('py', '-3.11'), @('py', '-3.10'), @('py', '-3'),
        @('python'), @('python3')
    )
    foreach ($candidate in $candidates) {
        $command = Get-Command $candidate[0] -CommandType Application -ErrorAction SilentlyContinue |
            Select-Object -First 1
        if (-not $command) { continue }
        $pre = @($candidate | Select-Object -Skip 1)
        if (Test-Python $command.Source $pre) {
            return @{ Exe = $command.Source; Pre = $pre }
        }
    }
    return $null
}

# Runs pip (or uv pip) in the environment; $true when it succeeded. Output goes to the
# console, not into the function's result.
function Install-Into([string[]]$PipArgs) {
    if ($script:uv) {
        & $script:uv pip install --quiet --python $envPython @PipArgs | Out-Host
    } else {
        & $envPython -m pip install --quiet @PipArgs | Out-Host
    }
    return ($LASTEXITCODE -eq 0)
}

# Whether the installed Waymark finds the embedding model without the network (a folder it
# was given, or the one it downloaded before): then nothing is fetched.
function Test-ModelHere {
    if (-not (Test-Path $envPython)) { return $false }
    & $envPython -c 'import sys; from waymark.recall import embed; sys.exit(not embed.semantic_available()[0])' 2>$null
    return ($LASTEXITCODE -eq 0)
}

if ($DryRun) {
    Say 'dry run: nothing is written'
    $with = if ($NoSemantic) { 'without' } else { 'with' }
    Say "would create or upgrade the environment $prefix and install Waymark from $src ($with semantic recall)"
    Say "would write $(Join-Path $binDir 'waymark.cmd') and add $binDir to your user PATH"
    if (-not $NoSemantic) {
        if (Test-ModelHere) { Say 'would use the embedding model already here (nothing to fetch)' }
        else { Say "would fetch the embedding model (about 90 MB) with 'waymark index'" }
    }
    if ($PerProject) {
        Say "would set capture per project: hooks stay silent until 'waymark enable' in a repository"
    } else {
        Say 'would keep the capture mode (on in every git repository unless you chose otherwise: capture.all_git_repos)'
    }
    if (-not $NoClients) { Say "would connect the Claude Code and Codex found here ('waymark install')" }
    exit 0
}

New-Item -ItemType Directory -Force -Path (Split-Path -Parent $prefix) | Out-Null
$script:uv = (Get-Command uv -CommandType Application -ErrorAction SilentlyContinue |
    Select-Object -First 1 | ForEach-Object { $_.Source })
if ($script:uv) {
    Say "creating the environment with uv in $prefix"
    if (-not (Test-Path -LiteralPath $envPython)) {
        & $script:uv venv --quiet --python '>=3.10' $prefix | Out-Host
        if ($LASTEXITCODE -ne 0) { Die 'uv could not create an environment with Python >= 3.10' }
    }
} else {
    $python = Find-Python
    if (-not $python) {
        Die ('Waymark needs Python 3.10 or newer and found none (tried py -3, python, python3). ' +
            'Install it from https://www.python.org (tick "Add python.exe to PATH") or with ' +
            '`winget install Python.Python.3.12`, then run install.ps1 again')
    }
    Say "creating the environment with $($python.Exe) $($python.Pre -join ' ') in $prefix"
    if (-not (Test-Path -LiteralPath $envPython)) {
        $venvArgs = @($python.Pre) + @('-m', 'venv', $prefix)
        & $python.Exe @venvArgs | Out-Host
        if ($LASTEXITCODE -ne 0) { Die "could not create a virtual environment in $prefix" }
    }
    try { & $envPython -m pip install --quiet --upgrade pip 2>$null | Out-Null } catch { }
}

# Waymark's dependencies are the locked versions the tests passed with (requirements\, every
# file's hash checked); Waymark itself after them, without resolving anything again.
$semanticDone = $false
if (-not $NoSemantic) {
    $semanticDone = Install-Into @('--require-hashes', '-r', (Join-Path $src 'requirements\install.txt'))
    if ($semanticDone) {
        Say 'installed the semantic extra (fastembed, sqlite-vec)'
    } else {
        Say 'semantic extra unavailable here; installing lexical recall only'
    }
}
if (-not $semanticDone) {
    if (-not (Install-Into @('--require-hashes', '-r', (Join-Path $src 'requirements\lexical.txt')))) {
        Die 'pip could not install the locked dependencies (requirements\lexical.txt)'
    }
}
# Before 0.2.0 the distribution was named waymark: one owner for Waymark's files.
if ($script:uv) {
    try { & $script:uv pip uninstall --quiet --python $envPython waymark 2>$null | Out-Null } catch { }
} else {
    try { & $envPython -m pip uninstall --quiet --yes waymark 2>$null | Out-Null } catch { }
}
# --force-reinstall: the same version number with new code still replaces Waymark itself.
if (-not (Install-Into @('--force-reinstall', '--no-deps', $src))) {
    Die "pip could not install Waymark from $src"
}
$locked = & $envPython -c "from importlib.metadata import version as v; import importlib.metadata as m; print(', '.join(f'{n} {v(n)}' for n in ('mcp', 'pydantic', 'apsw', 'jinja2', 'fastembed', 'onnxruntime', 'psycopg') if n in {d.metadata['Name'].lower() for d in m.distributions()}))"
Say "locked versions: $locked"

New-Item -ItemType Directory -Force -Path $binDir | Out-Null
$shim = Join-Path $binDir 'waymark.cmd'
Set-Content -LiteralPath $shim -Encoding ASCII -Value @('@echo off', "`"$waymarkExe`" %*")
Say "wrote $shim"
$userPath = [Environment]::GetEnvironmentVariable('Path', 'User')
if (-not $userPath) { $userPath = '' }
if (($userPath -split ';') -notcontains $binDir) {
    $newPath = (($userPath.TrimEnd(';'), $binDir) | Where-Object { $_ }) -join ';'
    [Environment]::SetEnvironmentVariable('Path', $newPath, 'User')
    Say "added $binDir to your user PATH (open a new terminal to use ``waymark``)"
}

# What `waymark uninstall --all` removes: this environment and the shim.
$record = @{ environment = $prefix; link = $shim } | ConvertTo-Json -Compress
Set-Content -LiteralPath (Join-Path $prefix 'waymark-install.json') -Encoding UTF8 -Value $record

# Run from the home folder: nothing here is about the checkout's own project.
function Invoke-Waymark([string[]]$WaymarkArgs) {
    Push-Location $HOME
    try { & $waymarkExe @WaymarkArgs | Out-Host; return ($LASTEXITCODE -eq 0) }
    finally { Pop-Location }
}
if (-not (Invoke-Waymark @('status'))) { Die "waymark was installed but 'waymark status' failed" }
# Only -PerProject changes the capture mode: a re-run keeps whatever the user chose.
if ($PerProject) {
    if (-not (Invoke-Waymark @('config', 'capture.all_git_repos', 'false'))) { Die 'could not set the capture mode' }
}
Push-Location $HOME
try { $everywhere = (& $waymarkExe config capture.all_git_repos) -join '' } finally { Pop-Location }
if ($LASTEXITCODE -ne 0) { Die 'could not read the capture mode' }
if ($everywhere -match 'true$') {
    $capture = "on in every git repository (per project instead: 'waymark config capture.all_git_repos false', then 'waymark enable' where you want it)"
} else {
    $capture = "per project: hooks stay silent until you run 'waymark enable' in a repository (every repository: 'waymark config capture.all_git_repos true')"
}
if ($semanticDone) {
    if (Test-ModelHere) { Say 'the embedding model is here already; embedding what has no vector yet' }
    else { Say 'fetching the embedding model (about 90 MB, once)' }
    if (Invoke-Waymark @('index', '--all-projects')) {
        $recall = 'semantic and lexical (the MCP server embeds new memories by itself)'
    } else {
        $recall = "lexical until the embedding model is fetched: run 'waymark index' when online"
    }
} else {
    $recall = 'lexical (installed without the semantic extra)'
}
if (-not $NoClients) {
    Say 'connecting Claude Code and Codex (waymark install)'
    if (-not (Invoke-Waymark @('install'))) {
        Die "Waymark is installed, but connecting the clients failed (see above); fix that and run 'waymark install'"
    }
} else {
    Say "skipped connecting the clients; run 'waymark install' when you want them"
}
Say "capture: $capture"
Say "recall: $recall"
if ($PerProject) {
    Say "done: run 'waymark enable' in a repository, then open Claude Code or Codex there"
} else {
    Say 'done: open Claude Code or Codex in any git repository'
}
