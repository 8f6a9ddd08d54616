@echo off
rem Windows twin of waymark-run: Waymark's own Python runs a hook module or the MCP server.
setlocal
set "PY=%WAYMARK_PYTHON%"
if "%PY%"=="" if not "%WAYMARK_PREFIX%"=="" set "PY=%WAYMARK_PREFIX%\Scripts\python.exe"
if "%PY%"=="" set "PY=%LOCALAPPDATA%\waymark\env\Scripts\python.exe"
if not exist "%PY%" (
  echo waymark: not installed; run install.ps1 -NoClients from a Waymark checkout 1>&2
  if "%~1"=="mcp" exit /b 1
  exit /b 0
)
set "WAYMARK_ROUTE=plugin"
if "%~1"=="mcp" (
  "%PY%" -m waymark mcp
  exit /b %ERRORLEVEL%
)
"%PY%" -I -c "from waymark.hooks.%~1 import main;main()" %2
exit /b 0
